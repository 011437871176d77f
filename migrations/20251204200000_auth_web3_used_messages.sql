-- GoTrue's Web3 sign-in (`grant_type=web3`): the signed Sign-In with Ethereum / Solana messages
-- already used for a session, by the SHA-256 of the message text, each kept until it can no
-- longer pass the time checks (its Issued At plus the chain's maximum validity, or its Expiration
-- Time if earlier). GoTrue keeps none and accepts a message again until its window ends; here a
-- message signs in once, on whichever server sees it first.
CREATE TABLE auth.web3_used_messages (
    digest      bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX web3_used_messages_expires_at_idx ON auth.web3_used_messages (expires_at);

REVOKE ALL ON auth.web3_used_messages FROM PUBLIC, anon, authenticated;
