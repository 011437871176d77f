-- The outbox of the Auth mails: a mail is written in the transaction that issues the token it
-- carries, so it exists exactly when its token does, whichever server wrote it and whatever
-- happens to that server afterwards. Any server's sender claims a due row with
-- FOR UPDATE SKIP LOCKED, holds the row lock while it talks to the mail server and records the
-- outcome in the same transaction: a server that dies mid-delivery releases the row (its
-- transaction aborts) and another attempt follows, so a mail is sent at least once.
--
-- `subject`, `html`, `link` and `code` carry the mail's secrets (the link token, the code): they
-- are erased when the mail reaches its outcome; the row itself (recipient, kind, attempts,
-- outcome, last error) is kept for a while as the delivery record.
CREATE TABLE auth.mail_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The mail server of the server that wrote it (`smtp://user@host:port`, or `log`): only
    -- servers with the same one deliver it (replicas share one configuration).
    route           text NOT NULL,
    kind            text NOT NULL,
    recipient       text NOT NULL,
    subject         text,
    html            text,
    link            text,
    code            text,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'logged', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    last_error      text
);
-- The senders' question: the pending rows that are due, oldest first.
CREATE INDEX mail_outbox_pending_idx ON auth.mail_outbox (route, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX mail_outbox_finished_idx ON auth.mail_outbox (finished_at) WHERE status <> 'pending';

REVOKE ALL ON auth.mail_outbox FROM PUBLIC, anon, authenticated;
GRANT ALL ON auth.mail_outbox TO service_role;
