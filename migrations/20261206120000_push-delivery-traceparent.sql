-- Up Migration

-- The W3C trace context of the event a delivery sends (its Kafka record's `traceparent` header), for the
-- delivery's `traceparent` header and its `push deliver` span (issue 13, docs/observability.md). Null for
-- events without one and for rows derived before this column.
ALTER TABLE ops.push_deliveries ADD COLUMN traceparent text;

-- Down Migration

ALTER TABLE ops.push_deliveries DROP COLUMN traceparent;
