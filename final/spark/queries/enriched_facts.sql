-- source: 003, 'Left joins': facts LEFT JOIN users LEFT JOIN addrs LEFT JOIN agent
-- partition_by: facts=user_id, users=id, addrs=*, agent=*
SELECT f.fact_id, f.user_id, f.amount,
       u.id AS `users.id`, u.name, u.addr_id,
       a.id AS `addrs.id`, a.street, a.zipcode,
       g.zc, g.agent_name
FROM facts f
LEFT JOIN users u ON f.user_id = u.id
LEFT JOIN addrs a ON u.addr_id = a.id
LEFT JOIN agent g ON a.zipcode = g.zc
