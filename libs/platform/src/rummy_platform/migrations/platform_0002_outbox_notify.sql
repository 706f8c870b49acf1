-- Wakes the outbox relay (rummy_platform.outbox.OutboxRelay) when rows are written, instead of
-- the relay querying the outbox every 0.2 s (5 transactions a second per service doing nothing,
-- issue 19): a statement that inserts outbox rows queues one notification on the channel
-- rummy_outbox with payload '<schema>.<table>'. PostgreSQL delivers it to every listening
-- session when the inserting transaction commits, never when it rolls back, and folds the
-- repeats of one transaction into one. Every writer is covered, whichever code inserts the rows.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('rummy_outbox', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS outbox_notify ON outbox;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
