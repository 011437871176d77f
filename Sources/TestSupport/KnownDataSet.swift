import Postgres

/// The known data set of the analytics tests, the schema's SQL sections (where a line
/// `-- include: KnownDataSet` stands for it) and the dashboard's. All times UTC, June 2025:
///   U1 e-mail,    signed up Mon 06-02 10:00: every step, 2/3/5/2/4/6/1 min, COMPLETE 10:23; 2 children
///   U2 google,    signed up Mon 06-02 11:00: NOT_STARTED 4 min, USER_INFO 6 min, now at CHILD_INFO
///   U3 anonymous, signed up Tue 06-03 09:00: 1/2/1/2/1/1 min to REVIEW, back to CHILD_INFO for
///                 5 min, REVIEW 1 min, COMPLETE 09:16; 1 child
///   U4 anonymous, signed up Mon 06-09 08:00, upgraded to e-mail on 06-10 (its first identity is a
///                 day younger than the user): NOT_STARTED 30 min, now at USER_INFO
///   U5 apple,     signed up Mon 06-09 12:00: still NOT_STARTED
///   U6 e-mail,    signed up Tue 06-10, given a COMPLETE profile on 06-20 (backfill-profiles)
/// Users, profiles and children are written without triggers (session_replication_role), the
/// history with its own triggers on, at the times above.
public enum KnownDataSet {
    /// The line of a SQL test section that the data set replaces.
    public static let include = "-- include: KnownDataSet"

    /// The statements; they `SET LOCAL`, so they run inside a transaction.
    public static let sql = #"""
        SET LOCAL session_replication_role = replica;
        INSERT INTO auth.users (id, email, is_anonymous, raw_app_meta_data, created_at) VALUES
          ('a0000000-0000-4000-8000-000000000001', 'u1@example.com', false, '{"provider":"email","providers":["email"]}', '2025-06-02 10:00Z'),
          ('a0000000-0000-4000-8000-000000000002', 'u2@example.com', false, '{"provider":"google","providers":["google"]}', '2025-06-02 11:00Z'),
          ('a0000000-0000-4000-8000-000000000003', NULL, true, '{"provider":"anonymous","providers":[]}', '2025-06-03 09:00Z'),
          ('a0000000-0000-4000-8000-000000000004', 'u4@example.com', false, '{"provider":"email","providers":["email"]}', '2025-06-09 08:00Z'),
          ('a0000000-0000-4000-8000-000000000005', 'u5@example.com', false, '{"provider":"apple","providers":["apple"]}', '2025-06-09 12:00Z'),
          ('a0000000-0000-4000-8000-000000000006', 'u6@example.com', false, '{"provider":"email","providers":["email"]}', '2025-06-10 07:00Z');
        INSERT INTO auth.identities (provider_id, user_id, provider, created_at) VALUES
          ('u1', 'a0000000-0000-4000-8000-000000000001', 'email', '2025-06-02 10:00Z'),
          ('u2', 'a0000000-0000-4000-8000-000000000002', 'google', '2025-06-02 11:00Z'),
          ('u4', 'a0000000-0000-4000-8000-000000000004', 'email', '2025-06-10 08:00Z'),
          ('u5', 'a0000000-0000-4000-8000-000000000005', 'apple', '2025-06-09 12:00Z'),
          ('u6', 'a0000000-0000-4000-8000-000000000006', 'email', '2025-06-10 07:00Z');
        INSERT INTO public.user_profiles (id, onboarding_state, created_at, updated_at, onboarding_completed_at) VALUES
          ('a0000000-0000-4000-8000-000000000001', 'COMPLETE', '2025-06-02 10:00Z', '2025-06-02 10:23Z', '2025-06-02 10:23Z'),
          ('a0000000-0000-4000-8000-000000000002', 'CHILD_INFO', '2025-06-02 11:00Z', '2025-06-02 11:10Z', NULL),
          ('a0000000-0000-4000-8000-000000000003', 'COMPLETE', '2025-06-03 09:00Z', '2025-06-03 09:16Z', '2025-06-03 09:16Z'),
          ('a0000000-0000-4000-8000-000000000004', 'USER_INFO', '2025-06-09 08:00Z', '2025-06-09 08:30Z', NULL),
          ('a0000000-0000-4000-8000-000000000005', 'NOT_STARTED', '2025-06-09 12:00Z', '2025-06-09 12:00Z', NULL),
          ('a0000000-0000-4000-8000-000000000006', 'COMPLETE', '2025-06-20 00:00Z', '2025-06-20 00:00Z', '2025-06-20 00:00Z');
        INSERT INTO public.children (user_id, name) VALUES
          ('a0000000-0000-4000-8000-000000000001', 'Maya'), ('a0000000-0000-4000-8000-000000000001', 'Leo'),
          ('a0000000-0000-4000-8000-000000000003', 'Ada');
        SET LOCAL session_replication_role = origin;
        -- The history, written as the superuser with known times; the history's own triggers fill in
        -- from_state_since and the progress.
        INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state, at)
        SELECT v.u::uuid, lag(v.s) OVER (PARTITION BY v.u ORDER BY v.at::timestamptz), v.s, v.at::timestamptz
          FROM (VALUES
            ('a0000000-0000-4000-8000-000000000001', 'NOT_STARTED', '2025-06-02 10:00Z'), ('a0000000-0000-4000-8000-000000000001', 'USER_INFO', '2025-06-02 10:02Z'),
            ('a0000000-0000-4000-8000-000000000001', 'CHILD_INFO', '2025-06-02 10:05Z'), ('a0000000-0000-4000-8000-000000000001', 'GOALS', '2025-06-02 10:10Z'),
            ('a0000000-0000-4000-8000-000000000001', 'TOPICS', '2025-06-02 10:12Z'), ('a0000000-0000-4000-8000-000000000001', 'DISPOSITIONS', '2025-06-02 10:16Z'),
            ('a0000000-0000-4000-8000-000000000001', 'REVIEW', '2025-06-02 10:22Z'), ('a0000000-0000-4000-8000-000000000001', 'COMPLETE', '2025-06-02 10:23Z'),
            ('a0000000-0000-4000-8000-000000000002', 'NOT_STARTED', '2025-06-02 11:00Z'), ('a0000000-0000-4000-8000-000000000002', 'USER_INFO', '2025-06-02 11:04Z'),
            ('a0000000-0000-4000-8000-000000000002', 'CHILD_INFO', '2025-06-02 11:10Z'),
            ('a0000000-0000-4000-8000-000000000003', 'NOT_STARTED', '2025-06-03 09:00Z'), ('a0000000-0000-4000-8000-000000000003', 'USER_INFO', '2025-06-03 09:01Z'),
            ('a0000000-0000-4000-8000-000000000003', 'CHILD_INFO', '2025-06-03 09:03Z'), ('a0000000-0000-4000-8000-000000000003', 'GOALS', '2025-06-03 09:04Z'),
            ('a0000000-0000-4000-8000-000000000003', 'TOPICS', '2025-06-03 09:06Z'), ('a0000000-0000-4000-8000-000000000003', 'DISPOSITIONS', '2025-06-03 09:07Z'),
            ('a0000000-0000-4000-8000-000000000003', 'REVIEW', '2025-06-03 09:08Z'), ('a0000000-0000-4000-8000-000000000003', 'CHILD_INFO', '2025-06-03 09:10Z'),
            ('a0000000-0000-4000-8000-000000000003', 'REVIEW', '2025-06-03 09:15Z'), ('a0000000-0000-4000-8000-000000000003', 'COMPLETE', '2025-06-03 09:16Z'),
            ('a0000000-0000-4000-8000-000000000004', 'NOT_STARTED', '2025-06-09 08:00Z'), ('a0000000-0000-4000-8000-000000000004', 'USER_INFO', '2025-06-09 08:30Z'),
            ('a0000000-0000-4000-8000-000000000005', 'NOT_STARTED', '2025-06-09 12:00Z'),
            ('a0000000-0000-4000-8000-000000000006', 'COMPLETE', '2025-06-20 00:00Z')
          ) AS v(u, s, at)
         ORDER BY v.at::timestamptz;
        """#

    /// Inserts the data set into the database at `databaseURL`, in a transaction of its own.
    public static func insert(into databaseURL: String) throws {
        try Connection(conninfo: databaseURL).execute(unsafeSQL: "BEGIN;\n" + sql + "\nCOMMIT;")
    }
}
