import Foundation
import Postgres
import TestSupport
import Testing

/// PostgREST's AggregateFunctionsSpec (`db-aggregates-enabled`): `count()` and
/// `col.sum()/avg()/min()/max()/count()` with aliases and casts, grouped by the other selected
/// columns, inside embeds, and inside to-one spreads (grouped in the spread, hoisted to the
/// level it merges into). Each case is the spec's request and the spec's answer, grouped as the
/// spec groups them.
@Suite("PostgREST spec cases: aggregates", .serialized)
struct PostgRESTSpecAggregateTests {
    /// The tables AggregateFunctionsSpec reads besides `PostgRESTSpecTests`'s (PostgREST's
    /// `schema.sql` and `data.sql`, moved from `test` to `spec`).
    static let fixtures = ##"""
        CREATE TABLE spec.trash (id int PRIMARY KEY);
        CREATE TABLE spec.trash_details (id int PRIMARY KEY REFERENCES spec.trash(id), jsonb_col jsonb);
        CREATE TABLE spec.project_invoices (id int PRIMARY KEY, invoice_total numeric, project_id integer REFERENCES spec.projects(id));
        CREATE TABLE spec.budget_categories (id int PRIMARY KEY, category_name text, budget_owner text, budget_amount numeric);
        CREATE TABLE spec.budget_expenses (
            id int PRIMARY KEY, expense_amount numeric, budget_category_id integer REFERENCES spec.budget_categories(id));
        CREATE TABLE spec.factories (id int PRIMARY KEY, name text);
        CREATE TABLE spec.process_categories (id int PRIMARY KEY, name text);
        CREATE TABLE spec.processes (
            id int PRIMARY KEY, name text, factory_id int REFERENCES spec.factories(id),
            category_id int REFERENCES spec.process_categories(id));
        CREATE TABLE spec.process_costs (process_id int REFERENCES spec.processes(id) PRIMARY KEY, cost numeric);
        CREATE TABLE spec.supervisors (id int PRIMARY KEY, name text);
        CREATE TABLE spec.process_supervisor (
            process_id int REFERENCES spec.processes(id), supervisor_id int REFERENCES spec.supervisors(id),
            PRIMARY KEY (process_id, supervisor_id));
        CREATE TABLE spec.factory_buildings (
            id int PRIMARY KEY, code char(4), size numeric, "type" char(1), factory_id int REFERENCES spec.factories(id), inspections jsonb);
        INSERT INTO spec.trash VALUES (1), (2), (3);
        INSERT INTO spec.trash_details VALUES (1, '{"key": 10}'), (2, '{"key": 6}'), (3, '{"key": 8}');
        INSERT INTO spec.project_invoices VALUES
            (1, 100, 1), (2, 200, 1), (3, 500, 2), (4, 700, 2), (5, 1200, 3), (6, 2000, 3), (7, 100, 4), (8, 4000, 4);
        INSERT INTO spec.budget_categories VALUES
            (1, 'Beanie Babies', 'Brian Smith', 1000.31), (2, 'DVDs', 'Jane Clarkson', 2000.12), (3, 'Pizza', 'Brian Smith', 1000.11),
            (4, 'Opera Tickets', 'Jane Clarkson', 7000.41), (5, 'Nuclear Fusion Research', 'Sally Hughes', 500.23),
            (6, 'T-5hirts', 'Dana de Groot', 500.33);
        INSERT INTO spec.budget_expenses VALUES (1, 200.26, 1), (2, 400.26, 3), (3, 100.22, 4), (5, 900.27, 5);
        INSERT INTO spec.factories VALUES (1, 'Factory A'), (2, 'Factory B'), (3, 'Factory C'), (4, 'Factory D');
        INSERT INTO spec.process_categories VALUES (1, 'Batch'), (2, 'Mass');
        INSERT INTO spec.processes VALUES
            (1, 'Process A1', 1, 1), (2, 'Process A2', 1, 2), (3, 'Process B1', 2, 1), (4, 'Process B2', 2, 1),
            (5, 'Process C1', 3, 2), (6, 'Process C2', 3, 2), (7, 'Process XX', 3, 2), (8, 'Process YY', 3, 2);
        INSERT INTO spec.process_costs VALUES (1, 150.00), (2, 200.00), (3, 180.00), (4, 70.00), (5, 40.00), (6, 70.00), (8, 40.00);
        INSERT INTO spec.supervisors VALUES (1, 'Mary'), (2, 'John'), (3, 'Peter'), (4, 'Sarah'), (5, 'Jane');
        INSERT INTO spec.process_supervisor VALUES (1, 1), (2, 2), (3, 3), (3, 4), (4, 1), (4, 2), (5, 3), (6, 3);
        INSERT INTO spec.factory_buildings VALUES
            (1, 'A001', 150, 'A', 1, '{"ins": "2024C", "pending": true}'), (2, 'A002', 200, 'A', 1, '{"ins": "2025A", "pending": true}'),
            (3, 'B001', 50, 'B', 2, '{"ins": "2025A", "pending": true}'), (4, 'B002', 120, 'C', 2, '{"ins": "2023A"}'),
            (5, 'C001', 240, 'B', 3, '{"ins": "2022B"}'), (6, 'D001', 310, 'A', 4, '{"ins": "2024C", "pending": true}');
        GRANT SELECT ON ALL TABLES IN SCHEMA spec TO anon, authenticated, service_role;
        """##

    /// A server on the spec's fixtures, aggregates enabled or not.
    static func server(aggregates: Bool) throws -> TestServer {
        let server = try TestServer {
            $0.postgrest.schemas = ["public", "spec"]
            $0.aggregatesEnabled = aggregates
        }
        try server.installSpecFixtures(PostgRESTSpecTests.fixtures + fixtures, profile: "spec", probe: "/process_supervisor")
        return server
    }

    let server: TestServer

    init() throws { server = try Self.server(aggregates: true) }

    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try server.expectSpec(path, expected, status: status, sourceLocation: sourceLocation)
    }

    @Test func countWithoutAField() throws {
        // "returns the count of all rows when no other fields are selected"
        try check("/entities?select=count()", #"[{"count":4}]"#)
        // "allows you to specify an alias for the count"
        try check("/entities?select=cnt:count()", #"[{"cnt":4}]"#)
        // "allows you to cast the result of the count"
        try check("/entities?select=count()::text", #"[{"count":"4"}]"#)
        // "returns the count grouped by all provided fields when other fields are selected"
        try check(
            "/projects?select=c:count(),client_id&order=client_id.desc",
            #"[{"c":1,"client_id":null},{"c":2,"client_id":2},{"c":2,"client_id":1}]"#)
    }

    @Test func countAsAColumn() throws {
        // "returns the count of all rows when no other fields are selected"
        try check("/entities?select=count", #"[{"count":4}]"#)
        // "returns the embedded count of another resource" (the spec's URL ends in a quote)
        try check(
            "/clients?select=name,projects(count)'",
            #"[{"name":"Microsoft","projects":[{"count":2}]},{"name":"Apple","projects":[{"count":2}]}]"#)
    }

    @Test func aggregatesOnFields() throws {
        try check("/project_invoices?select=invoice_total.sum()", #"[{"sum":8800}]"#)
        try check("/project_invoices?select=invoice_total.avg()", #"[{"avg":1100.0000000000000000}]"#)
        try check("/project_invoices?select=invoice_total.min()", #"[{"min":100}]"#)
        try check("/project_invoices?select=invoice_total.max()", #"[{"max":4000}]"#)
        try check("/project_invoices?select=invoice_total.count()", #"[{"count":8}]"#)
        // "groups by any fields selected that do not have an aggregate applied"
        try check(
            "/project_invoices?select=invoice_total.sum(),invoice_total.max(),invoice_total.min(),project_id&order=project_id.desc",
            #"[{"sum":4100,"max":4000,"min":100,"project_id":4},{"sum":3200,"max":2000,"min":1200,"project_id":3},{"sum":1200,"max":700,"min":500,"project_id":2},{"sum":300,"max":200,"min":100,"project_id":1}]"#
        )
        // "supports the use of aliases on fields that will be used in the group by"
        try check(
            "/project_invoices?select=invoice_total.sum(),invoice_total.max(),invoice_total.min(),pid:project_id&order=project_id.desc",
            #"[{"sum":4100,"max":4000,"min":100,"pid":4},{"sum":3200,"max":2000,"min":1200,"pid":3},{"sum":1200,"max":700,"min":500,"pid":2},{"sum":300,"max":200,"min":100,"pid":1}]"#
        )
        // "allows you to specify an alias for the aggregate"
        try check(
            "/project_invoices?select=total_charged:invoice_total.sum(),project_id&order=project_id.desc",
            #"[{"total_charged":4100,"project_id":4},{"total_charged":3200,"project_id":3},{"total_charged":1200,"project_id":2},{"total_charged":300,"project_id":1}]"#
        )
        // "allows you to cast the result of the aggregate"
        try check(
            "/project_invoices?select=total_charged:invoice_total.sum()::text,project_id&order=project_id.desc",
            #"[{"total_charged":"4100","project_id":4},{"total_charged":"3200","project_id":3},{"total_charged":"1200","project_id":2},{"total_charged":"300","project_id":1}]"#
        )
        // "allows you to cast the input argument of the aggregate"
        try check("/trash_details?select=jsonb_col->>key::integer.sum()", #"[{"sum":24}]"#)
        // "allows the combination of an alias, a before cast, and an after cast"
        try check("/trash_details?select=s:jsonb_col->>key::integer.sum()::text", #"[{"s":"24"}]"#)
        // "supports use of aggregates on RPC functions that return table values"
        try check("/rpc/getallprojects?select=id.max()", #"[{"max":5}]"#)
        // "allows the use of an JSON-embedded relationship column as part of the group by"
        try check(
            "/project_invoices?select=project_id,total:invoice_total.sum(),projects(name)&order=project_id",
            #"[{"project_id":1,"total":300,"projects":{"name":"Windows 7"}},{"project_id":2,"total":1200,"projects":{"name":"Windows 10"}},{"project_id":3,"total":3200,"projects":{"name":"IOS"}},{"project_id":4,"total":4100,"projects":{"name":"OSX"}}]"#
        )
    }

    @Test func aggregatesInEmbeds() throws {
        try check(
            "/projects?select=name,project_invoices(invoice_total.sum())",
            #"[{"name":"Windows 7","project_invoices":[{"sum":300}]},{"name":"Windows 10","project_invoices":[{"sum":1200}]},{"name":"IOS","project_invoices":[{"sum":3200}]},{"name":"OSX","project_invoices":[{"sum":4100}]},{"name":"Orphan","project_invoices":[{"sum":null}]}]"#
        )
        try check(
            "/projects?select=name,project_invoices(invoice_total.max())",
            #"[{"name":"Windows 7","project_invoices":[{"max":200}]},{"name":"Windows 10","project_invoices":[{"max":700}]},{"name":"IOS","project_invoices":[{"max":2000}]},{"name":"OSX","project_invoices":[{"max":4000}]},{"name":"Orphan","project_invoices":[{"max":null}]}]"#
        )
        try check(
            "/projects?select=name,project_invoices(invoice_total.avg())",
            #"[{"name":"Windows 7","project_invoices":[{"avg":150.0000000000000000}]},{"name":"Windows 10","project_invoices":[{"avg":600.0000000000000000}]},{"name":"IOS","project_invoices":[{"avg":1600.0000000000000000}]},{"name":"OSX","project_invoices":[{"avg":2050.0000000000000000}]},{"name":"Orphan","project_invoices":[{"avg":null}]}]"#
        )
        try check(
            "/projects?select=name,project_invoices(invoice_total.min())",
            #"[{"name":"Windows 7","project_invoices":[{"min":100}]},{"name":"Windows 10","project_invoices":[{"min":500}]},{"name":"IOS","project_invoices":[{"min":1200}]},{"name":"OSX","project_invoices":[{"min":100}]},{"name":"Orphan","project_invoices":[{"min":null}]}]"#
        )
        // "supports all at once"
        try check(
            "/projects?select=name,project_invoices(invoice_total.max(),invoice_total.min(),invoice_total.avg(),invoice_total.sum(),invoice_total.count())",
            #"[{"name":"Windows 7","project_invoices":[{"avg":150.0000000000000000,"max":200,"min":100,"sum":300,"count":2}]},{"name":"Windows 10","project_invoices":[{"avg":600.0000000000000000,"max":700,"min":500,"sum":1200,"count":2}]},{"name":"IOS","project_invoices":[{"avg":1600.0000000000000000,"max":2000,"min":1200,"sum":3200,"count":2}]},{"name":"OSX","project_invoices":[{"avg":2050.0000000000000000,"max":4000,"min":100,"sum":4100,"count":2}]},{"name":"Orphan","project_invoices":[{"avg":null,"max":null,"min":null,"sum":null,"count":0}]}]"#
        )
    }
}
