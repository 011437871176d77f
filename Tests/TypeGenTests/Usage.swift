/// Client code written as an app's would be, against the generated types: the calls of the
/// onboarding flow through each client library's shape (the few signatures those calls need,
/// declared here: the libraries themselves are not installed), and uses that must not compile.
enum SwiftUsage {
    /// supabase-swift's PostgREST builder, as far as the usage goes: `from`, `select`, `insert`,
    /// `update`, `eq`, `single`, `rpc`, `execute().value` decoding into the caller's type.
    static let client = """
        import Foundation

        public struct PostgrestResponse<T: Sendable>: Sendable {
            public let value: T
        }

        public struct PostgrestFilterBuilder: Sendable {
            let body: Data
            public func select(_ columns: String = "*") -> PostgrestFilterBuilder { self }
            public func eq(_ column: String, value: some Sendable) -> PostgrestFilterBuilder { self }
            public func single() -> PostgrestFilterBuilder { self }
            public func execute<T: Decodable & Sendable>() async throws -> PostgrestResponse<T> {
                PostgrestResponse(value: try JSONDecoder().decode(T.self, from: body))
            }
            public func execute() async throws {}
        }

        public struct PostgrestQueryBuilder: Sendable {
            public func select(_ columns: String = "*") -> PostgrestFilterBuilder { PostgrestFilterBuilder(body: Data()) }
            public func insert(_ values: some Encodable & Sendable) throws -> PostgrestFilterBuilder {
                PostgrestFilterBuilder(body: try JSONEncoder().encode(values))
            }
            public func update(_ values: some Encodable & Sendable) throws -> PostgrestFilterBuilder {
                PostgrestFilterBuilder(body: try JSONEncoder().encode(values))
            }
            public func delete() -> PostgrestFilterBuilder { PostgrestFilterBuilder(body: Data()) }
        }

        public struct SupabaseClient: Sendable {
            public func from(_ table: String) -> PostgrestQueryBuilder { PostgrestQueryBuilder() }
            public func rpc(_ function: String, params: some Encodable & Sendable) throws -> PostgrestFilterBuilder {
                PostgrestFilterBuilder(body: try JSONEncoder().encode(params))
            }
            public func rpc(_ function: String) throws -> PostgrestFilterBuilder { PostgrestFilterBuilder(body: Data()) }
        }
        """

    static let valid = """
        import Foundation

        typealias DB = PublicSchema

        func onboarding(_ supabase: SupabaseClient, user: UUID) async throws -> [DB.GetUserWithProfileResult] {
            let profile: DB.UserProfilesSelect = try await supabase.from("user_profiles").select().eq("id", value: user).single().execute().value
            guard profile.onboardingState != .complete else { return [] }
            try await supabase.from("user_profiles").update(DB.UserProfilesUpdate(onboardingState: .childInfo)).eq("id", value: user).execute()

            let child = DB.ChildrenInsert(name: "Mia", birthday: "2019-05-01", goals: ["Listen more"], topics: ["school", "friends", "feelings"])
            let inserted: [DB.ChildrenSelect] = try await supabase.from("children").insert(child).select().execute().value
            let ids: [UUID] = inserted.map(\\.id)
            var edit = DB.ChildrenUpdate()
            edit.temperamentTalkative = 7
            try await supabase.from("children").update(edit).eq("id", value: ids[0]).execute()

            let completed: DB.CompleteOnboardingResult = try await supabase.rpc("complete_onboarding").execute().value
            let last: DB.OnboardingState? = DB.OnboardingState.allCases.last
            _ = (completed.onboardingState == last, completed.onboardingCompletedAt, completed.id)
            let all: [DB.AllChildrenResult] = try await supabase.rpc("all_children", params: DB.AllChildrenParams(profile: completed)).execute().value
            _ = all.map(\\.name)

            let family: DB.CreateFamilyResult = try await supabase.rpc("create_family", params: DB.CreateFamilyParams(name: "Ours")).execute().value
            _ = family
            let members: [DB.FamilyMembersSelect] = try await supabase.from("family_members").select().execute().value
            _ = members.filter { $0.role == .owner }.map(\\.userId)
            return try await supabase.rpc("get_user_with_profile", params: DB.GetUserWithProfileParams(pUserId: user)).execute().value
        }

        func reservedWordsAndViews() throws -> Data {
            let odd = DB.OddNamesInsert(class: 3, default: [.calm, .noIdea], weirdName: 1.5, picked: .itS)
            let view = DB.ChildNamesUpdate(name: "Mia")
            let read: DB.ChildNamesSelect? = nil
            _ = (read?.name, view)
            return try JSONEncoder().encode(odd)
        }
        """

    /// (file name, source, a part of the diagnostic it must fail with).
    static let invalid: [(String, String, String)] = [
        ("MissingName", "func f() { _ = PublicSchema.ChildrenInsert(age: 3) }", "missing argument for parameter 'name'"),
        ("UnknownState", "func f() { _ = PublicSchema.UserProfilesUpdate(onboardingState: .finished) }", "has no member 'finished'"),
        ("TextForState", "func f(_ text: String) { _ = PublicSchema.UserProfilesUpdate(onboardingState: text) }", "cannot convert value of type 'String'"),
        ("ReadRowsAreRead", "func f(_ row: PublicSchema.ChildrenSelect) { var copy = row; copy.name = \"x\"; _ = copy }", "'let' constant")
    ]
}

enum TypeScriptUsage {
    /// supabase-js's typed client as far as the usage goes: `from(table)` with the table's `Row`,
    /// `Insert` and `Update`, `eq` on the row's columns, `rpc` with the function's `Args` and `Returns`.
    static let source = """
        import { Constants, Database, Enums, Tables, TablesInsert, TablesUpdate } from "./database"

        type Schema = Database["public"]
        type Result<T> = { data: T | null; error: { message: string } | null }
        interface Filter<Row, R> extends PromiseLike<Result<R>> {
          eq<K extends keyof Row & string>(column: K, value: NonNullable<Row[K]>): Filter<Row, R>
          select(columns?: string): Filter<Row, Row[]>
          single(): Filter<Row, Row>
        }
        interface From<T extends { Row: object; Insert: object; Update: object }> {
          select(columns?: string): Filter<T["Row"], T["Row"][]>
          insert(values: T["Insert"] | T["Insert"][]): Filter<T["Row"], null>
          update(values: T["Update"]): Filter<T["Row"], null>
          delete(): Filter<T["Row"], null>
        }
        interface Client {
          from<T extends keyof Schema["Tables"]>(table: T): From<Schema["Tables"][T]>
          rpc<F extends keyof Schema["Functions"]>(
            fn: F,
            ...args: Schema["Functions"][F]["Args"] extends Record<PropertyKey, never> ? [] : [Schema["Functions"][F]["Args"]]
          ): PromiseLike<Result<Schema["Functions"][F]["Returns"]>>
        }
        declare const supabase: Client

        export async function onboarding(user: string): Promise<(string | null)[]> {
          const { data: profile } = await supabase.from("user_profiles").select().eq("id", user).single()
          if (profile?.onboarding_state === "COMPLETE") return []
          await supabase.from("user_profiles").update({ onboarding_state: "CHILD_INFO" }).eq("id", user)

          const child: TablesInsert<"children"> = { name: "Mia", birthday: "2019-05-01", goals: ["Listen more"], topics: ["school", "friends", "feelings"] }
          await supabase.from("children").insert(child)
          const edit: TablesUpdate<"children"> = { temperament_talkative: 7 }
          await supabase.from("children").update(edit).eq("name", "Mia")

          const { data: done } = await supabase.rpc("complete_onboarding")
          const state: Enums<"onboarding_state"> | undefined = done?.onboarding_state
          const states: readonly Enums<"onboarding_state">[] = Constants.public.Enums.onboarding_state
          const children: Tables<"children">[] | null = (await supabase.rpc("all_children", { profile: done! })).data
          const view: Tables<"child_names"> | undefined = undefined
          const odd: TablesInsert<"odd_names"> = { class: 3, default: ["calm", "no-idea"], "Weird Name": 1.5, picked: "it's" }
          void [state, states, children, view, odd]
          const rows = await supabase.rpc("get_user_with_profile", { p_user_id: user })
          return (rows.data ?? []).map((row) => row.email)
        }

        export async function mistakes(user: string): Promise<void> {
          // @ts-expect-error: no such state
          await supabase.from("user_profiles").update({ onboarding_state: "FINISHED" })
          // @ts-expect-error: a child needs its name
          const nameless: TablesInsert<"children"> = { age: 3 }
          // @ts-expect-error: no such column
          await supabase.from("children").select().eq("nickname", "x")
          // @ts-expect-error: the argument is p_user_id
          await supabase.rpc("get_user_with_profile", { user_id: user })
          // @ts-expect-error: a row read has every column
          const partial: Tables<"children"> = { name: "x" }
          // @ts-expect-error: a number is no text
          const wrongType: TablesUpdate<"children"> = { name: 3 }
          void [nameless, partial, wrongType]
        }
        """
}

enum PythonUsage {
    /// supabase-py hands rows over as dicts: the generated TypedDicts annotate them.
    static let source = """
        from typing import List, Optional

        from database import (
            ChildNamesRow,
            ChildrenInsert,
            ChildrenRow,
            ChildrenUpdate,
            CompleteOnboardingResult,
            GetUserWithProfileArgs,
            GetUserWithProfileResult,
            OddNamesInsert,
            OnboardingState,
            UserProfilesUpdate,
        )


        def onboarding(user: str, rows: List[GetUserWithProfileResult], done: CompleteOnboardingResult) -> List[Optional[str]]:
            move: UserProfilesUpdate = {"onboarding_state": "CHILD_INFO"}
            child: ChildrenInsert = {"name": "Mia", "birthday": "2019-05-01", "goals": ["Listen more"], "topics": ["school", "friends", "feelings"]}
            edit: ChildrenUpdate = {"temperament_talkative": 7}
            args: GetUserWithProfileArgs = {"p_user_id": user}
            state: OnboardingState = done["onboarding_state"]
            odd: OddNamesInsert = {"class": 3, "default": ["calm", "no-idea"], "Weird Name": 1.5, "picked": "it's"}
            print(move, child, edit, args, state, odd)
            return [row["email"] for row in rows]


        def names(children: List[ChildrenRow], view: List[ChildNamesRow]) -> List[str]:
            return [child["name"] for child in children] + [row["name"] or "" for row in view]


        def mistakes() -> None:
            nameless: ChildrenInsert = {"age": 3}  # type: ignore[typeddict-item]
            finished: UserProfilesUpdate = {"onboarding_state": "FINISHED"}  # type: ignore[typeddict-item]
            number: ChildrenUpdate = {"name": 3}  # type: ignore[typeddict-item]
            state: OnboardingState = "DONE"  # type: ignore[assignment]
            print(nameless, finished, number, state)
        """
}
