-- source: Spark SQL's DOUBLE in a GROUP BY key: every NaN one group, -0.0 and 0.0 one group, NULL one group; thousands of keys, split by distance
-- partition_by: trips=trip_distance
SELECT passenger_count, trip_distance,
       COUNT(*) AS trips,
       MIN(fare_amount) AS min_fare,
       MAX(fare_amount) AS max_fare
FROM trips
GROUP BY passenger_count, trip_distance
