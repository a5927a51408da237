-- source: Spark SQL's DOUBLE: MIN and MAX where NaN is above every number, and -0.0 = 0.0
SELECT passenger_count,
       MIN(trip_distance) AS shortest,
       MAX(trip_distance) AS longest,
       COUNT(trip_distance) AS distances
FROM trips
GROUP BY passenger_count
