-- GoTrue's send-email hook delivers through the outbox: `hook_input` is the event the hook is
-- called with (`user`, `email_data` with the tokens, and `metadata`), written in the token's
-- transaction and erased with the mail's other secrets when the mail reaches its outcome. Its
-- `metadata.uuid` is also the HTTP hook's `webhook-id`, the same for every attempt, so an
-- endpoint can tell a retried mail from a new one.
ALTER TABLE auth.mail_outbox ADD COLUMN hook_input jsonb;
