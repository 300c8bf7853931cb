-- Moving a client to another shard (issue 39; docs/operations.md, "Moving a client to another shard").
--
-- client_placements, read on the shard default only: where a move put a client, over what the settings
-- (ledger.shards.<name>.clients) say. Every instance reads it at start and every ledger.shards.refresh.
CREATE TABLE client_placements (
    client    text        PRIMARY KEY,
    shard     text        NOT NULL,
    moved_at  timestamptz NOT NULL DEFAULT now()
);

-- client_fences, on the shard a client moved away from: nothing of that client is applied there any more, by
-- whatever instance, whatever it believes about where the client lives. The fence is checked by every write of a
-- request (every one inserts its key's record first, below) and by the expiry job, under the client's lock:
-- shared there, exclusive while the move puts the fence up, so that the move waits for every statement of the
-- client already past the check, and every later one sees the fence. A fenced write fails with SQLSTATE LM001;
-- the service answers it 503 with Retry-After (its commands wait) and looks the client's shard up again.
CREATE TABLE client_fences (
    client    text        PRIMARY KEY,
    moved_to  text        NOT NULL,
    fenced_at timestamptz NOT NULL DEFAULT now()
);

-- The client's lock: one advisory lock key per client (64-bit hash; a collision only makes two clients share it).
CREATE FUNCTION ledger_client_lock_key(p_client text)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT hashtextextended('ledger.client:' || p_client, 0)
$$;

CREATE FUNCTION ledger_check_fence()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(ledger_client_lock_key(NEW.client));
    IF EXISTS (SELECT 1 FROM client_fences f WHERE f.client = NEW.client) THEN
        RAISE EXCEPTION 'client % moved to another shard', NEW.client
            USING ERRCODE = 'LM001', HINT = 'look the client''s shard up again';
    END IF;
    RETURN NEW;
END
$$;

-- Before the insert, so before the statement has locked anything else: every write path records its key first.
CREATE TRIGGER idempotency_records_fence BEFORE INSERT ON idempotency_records
    FOR EACH ROW EXECUTE FUNCTION ledger_check_fence();

-- V7's expiry batch, which releases holds without a key: now it skips the holds of a fenced client, and those
-- of a client whose move is putting its fence up right now (the lock not granted at once: never a wait).
CREATE OR REPLACE FUNCTION ledger_expire_holds(p_batch integer, p_destinations text[])
RETURNS TABLE (released integer, oldest_left timestamptz, checked_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_holds transfers[];
    v_hold  transfers;
BEGIN
    SELECT array_agg(h.hold) INTO v_holds FROM (
        SELECT t AS hold FROM transfers t WHERE t.status = 'pending' AND t.expires_at <= now()
         ORDER BY t.expires_at LIMIT p_batch FOR NO KEY UPDATE SKIP LOCKED) h;
    IF v_holds IS NOT NULL THEN
        -- the locks first, the fences then, in a statement of its own: its snapshot sees a fence put up before
        SELECT array_agg(h) INTO v_holds FROM unnest(v_holds) h
         WHERE pg_try_advisory_xact_lock_shared(ledger_client_lock_key(h.owner));
        SELECT array_agg(h) INTO v_holds FROM unnest(v_holds) h
         WHERE NOT EXISTS (SELECT 1 FROM client_fences f WHERE f.client = h.owner);
    END IF;
    IF v_holds IS NOT NULL THEN
        PERFORM 1 FROM accounts a
         WHERE a.id IN (SELECT h.debit_account_id FROM unnest(v_holds) h UNION SELECT h.credit_account_id FROM unnest(v_holds) h)
         ORDER BY a.id FOR NO KEY UPDATE;
        FOREACH v_hold IN ARRAY v_holds LOOP
            PERFORM ledger_release_hold(v_hold, 'expired', p_destinations);
        END LOOP;
    END IF;
    RETURN QUERY
        SELECT coalesce(cardinality(v_holds), 0),
               (SELECT min(t.expires_at) FROM transfers t WHERE t.status = 'pending' AND t.expires_at <= now()
                   AND NOT EXISTS (SELECT 1 FROM client_fences f WHERE f.client = t.owner)),
               now();
END
$$;
