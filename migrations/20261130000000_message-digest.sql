-- Up Migration

-- SendMessage idempotency compares the whole message, not only its id: a repeat with the same messageId and
-- the same message is a retry (it gets the first task); another message under a used id is refused, so its
-- content is never silently dropped. SHA-256 (hex) of the RFC 8785 canonical JSON of the decoded message.
-- Rows written before this column existed have none and are treated as retries, as they were before.
ALTER TABLE ops.message_ids ADD COLUMN message_digest text;

-- Down Migration

ALTER TABLE ops.message_ids DROP COLUMN message_digest;
