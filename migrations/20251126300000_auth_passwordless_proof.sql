-- A mailed token that answers a passwordless sign-in (`/otp`) or a recovery (`/recover`), as
-- opposed to a sign-up's own confirmation mail or its resend. When such a token is the first proof
-- that the user holds the address, a password set before that proof (by whoever signed the address
-- up) is dropped and the user's sessions are ended, so only the mailbox's holder keeps access.
ALTER TABLE auth.one_time_tokens ADD COLUMN passwordless boolean NOT NULL DEFAULT false;
