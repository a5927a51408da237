-- source: 004, in-place totals: COUNT, SUM and AVG skipping NULLs
SELECT passenger_count,
       COUNT(*) AS trips,
       COUNT(fare_amount) AS fares,
       SUM(fare_amount) AS total_fare,
       AVG(fare_amount) AS average_fare
FROM trips
GROUP BY passenger_count
