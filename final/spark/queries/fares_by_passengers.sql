-- source: 004, 'Downsides': MIN, MAX and COUNT(DISTINCT) by passenger_count; NULL is a group
SELECT passenger_count,
       MIN(fare_amount) AS min_fare,
       MAX(fare_amount) AS max_fare,
       COUNT(DISTINCT trip_distance) AS distinct_distances
FROM trips
GROUP BY passenger_count
