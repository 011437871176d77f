import Foundation
import TestSupport
import Testing

/// PostgREST's AggregateFunctionsSpec, its spread cases: aggregates inside to-one spreads (the
/// spread's rows grouped by its other columns, the sums hoisted beside the parent's columns),
/// `count()` in nested spreads, and PGRST127 for a to-many spread; then the spec's
/// "disallowed" cases (aggregates off). On `PostgRESTSpecAggregateTests`'s fixtures.
@Suite("PostgREST spec cases: aggregates in spreads", .serialized)
struct PostgRESTSpecSpreadAggregateTests {
    let server: TestServer

    init() throws { server = try PostgRESTSpecAggregateTests.server(aggregates: true) }

    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try server.expectSpec(path, expected, status: status, sourceLocation: sourceLocation)
    }

    @Test func toOneSpreads() throws {
        // "supports the use of aggregates on spreaded fields"
        try check(
            "/budget_expenses?select=total_expenses:expense_amount.sum(),...budget_categories(budget_owner,total_budget:budget_amount.sum())&order=budget_categories(budget_owner)",
            #"[{"total_expenses":600.52,"budget_owner":"Brian Smith","total_budget":2000.42},{"total_expenses":100.22,"budget_owner":"Jane Clarkson","total_budget":7000.41},{"total_expenses":900.27,"budget_owner":"Sally Hughes","total_budget":500.23}]"#
        )
        // "supports the use of aggregates on spreaded fields when only aggregates are supplied"
        try check("/budget_expenses?select=...budget_categories(total_budget:budget_amount.sum())", #"[{"total_budget":9501.06}]"#)
        // "supports aggregates from a spread relationships grouped by spreaded fields from other relationships"
        try check(
            "/processes?select=...process_costs(cost.sum()),...process_categories(name)&order=process_categories(name)",
            #"[{"sum":400.00,"name":"Batch"},{"sum":350.00,"name":"Mass"}]"#)
        try check(
            "/processes?select=...process_costs(cost_sum:cost.sum()),...process_categories(category:name)&order=process_categories(category)",
            #"[{"cost_sum":400.00,"category":"Batch"},{"cost_sum":350.00,"category":"Mass"}]"#)
        // "supports aggregates on spreaded fields from nested relationships"
        try check(
            "/process_supervisor?select=...processes(factory_id,...process_costs(cost.sum()))&order=processes(factory_id).desc",
            #"[{"factory_id":3,"sum":110.00},{"factory_id":2,"sum":500.00},{"factory_id":1,"sum":350.00}]"#)
        try check(
            "/process_supervisor?select=...processes(factory_id,...process_costs(cost_sum:cost.sum()))&order=processes(factory_id).desc",
            #"[{"factory_id":3,"cost_sum":110.00},{"factory_id":2,"cost_sum":500.00},{"factory_id":1,"cost_sum":350.00}]"#)
        // "… grouped by a regular nested relationship"
        try check(
            "/process_supervisor?select=...processes(factories(name),...process_costs(cost.sum()))",
            #"[{"factories":{"name":"Factory A"},"sum":350.00},{"factories":{"name":"Factory B"},"sum":500.00},{"factories":{"name":"Factory C"},"sum":110.00}]"#
        )
        try check(
            "/process_supervisor?select=...processes(factory:factories(name),...process_costs(cost_sum:cost.sum()))",
            #"[{"factory":{"name":"Factory A"},"cost_sum":350.00},{"factory":{"name":"Factory B"},"cost_sum":500.00},{"factory":{"name":"Factory C"},"cost_sum":110.00}]"#
        )
    }

    @Test func nestedSpreadsGroupedBySpreadFields() throws {
        // "… grouped by spreaded fields from other nested relationships"
        try check(
            "/process_supervisor?select=supervisor_id,...processes(...process_costs(cost.sum()),...process_categories(name))&order=supervisor_id",
            #"[{"supervisor_id":1,"sum":220.00,"name":"Batch"},{"supervisor_id":2,"sum":70.00,"name":"Batch"},{"supervisor_id":2,"sum":200.00,"name":"Mass"},{"supervisor_id":3,"sum":180.00,"name":"Batch"},{"supervisor_id":3,"sum":110.00,"name":"Mass"},{"supervisor_id":4,"sum":180.00,"name":"Batch"}]"#
        )
        try check(
            "/process_supervisor?select=supervisor_id,...processes(...process_costs(cost_sum:cost.sum()),...process_categories(category:name))&order=supervisor_id",
            #"[{"supervisor_id":1,"cost_sum":220.00,"category":"Batch"},{"supervisor_id":2,"cost_sum":70.00,"category":"Batch"},{"supervisor_id":2,"cost_sum":200.00,"category":"Mass"},{"supervisor_id":3,"cost_sum":180.00,"category":"Batch"},{"supervisor_id":3,"cost_sum":110.00,"category":"Mass"},{"supervisor_id":4,"cost_sum":180.00,"category":"Batch"}]"#
        )
        // "… using a nested relationship as top parent"
        try check(
            "/supervisors?select=name,process_supervisor(...processes(...process_costs(cost.sum()),...process_categories(name)))",
            #"[{"name":"Mary","process_supervisor":[{"name":"Batch","sum":220.00}]},{"name":"John","process_supervisor":[{"name":"Batch","sum":70.00},{"name":"Mass","sum":200.00}]},{"name":"Peter","process_supervisor":[{"name":"Batch","sum":180.00},{"name":"Mass","sum":110.00}]},{"name":"Sarah","process_supervisor":[{"name":"Batch","sum":180.00}]},{"name":"Jane","process_supervisor":[]}]"#
        )
        try check(
            "/supervisors?select=name,process_supervisor(...processes(...process_costs(cost_sum:cost.sum()),...process_categories(category:name)))",
            #"[{"name":"Mary","process_supervisor":[{"category":"Batch","cost_sum":220.00}]},{"name":"John","process_supervisor":[{"category":"Batch","cost_sum":70.00},{"category":"Mass","cost_sum":200.00}]},{"name":"Peter","process_supervisor":[{"category":"Batch","cost_sum":180.00},{"category":"Mass","cost_sum":110.00}]},{"name":"Sarah","process_supervisor":[{"category":"Batch","cost_sum":180.00}]},{"name":"Jane","process_supervisor":[]}]"#
        )
    }

    @Test func countInSpreads() throws {
        // "works by itself in the embedded resource"
        try check(
            "/process_supervisor?select=supervisor_id,...processes(count())&order=supervisor_id",
            #"[{"supervisor_id":1,"count":2},{"supervisor_id":2,"count":2},{"supervisor_id":3,"count":3},{"supervisor_id":4,"count":1}]"#)
        try check(
            "/process_supervisor?select=supervisor_id,...processes(processes_count:count())&order=supervisor_id",
            #"[{"supervisor_id":1,"processes_count":2},{"supervisor_id":2,"processes_count":2},{"supervisor_id":3,"processes_count":3},{"supervisor_id":4,"processes_count":1}]"#
        )
        // "works alongside other columns in the embedded resource"
        try check(
            "/process_supervisor?select=...supervisors(id,count())&order=supervisors(id)",
            #"[{"id":1,"count":2},{"id":2,"count":2},{"id":3,"count":3},{"id":4,"count":1}]"#)
        try check(
            "/process_supervisor?select=...supervisors(supervisor:id,supervisor_count:count())&order=supervisors(supervisor)",
            #"[{"supervisor":1,"supervisor_count":2},{"supervisor":2,"supervisor_count":2},{"supervisor":3,"supervisor_count":3},{"supervisor":4,"supervisor_count":1}]"#
        )
        // "works on nested resources"
        try check(
            "/process_supervisor?select=supervisor_id,...processes(...process_costs(count()))&order=supervisor_id",
            #"[{"supervisor_id":1,"count":2},{"supervisor_id":2,"count":2},{"supervisor_id":3,"count":3},{"supervisor_id":4,"count":1}]"#)
        try check(
            "/process_supervisor?select=supervisor:supervisor_id,...processes(...process_costs(process_costs_count:count()))&order=supervisor_id",
            #"[{"supervisor":1,"process_costs_count":2},{"supervisor":2,"process_costs_count":2},{"supervisor":3,"process_costs_count":3},{"supervisor":4,"process_costs_count":1}]"#
        )
        // "works on nested resources grouped by spreaded fields"
        try check(
            "/process_supervisor?select=...processes(factory_id,...process_costs(count()))&order=processes(factory_id)",
            #"[{"factory_id":1,"count":2},{"factory_id":2,"count":4},{"factory_id":3,"count":2}]"#)
        try check(
            "/process_supervisor?select=...processes(factory:factory_id,...process_costs(process_costs_count:count()))&order=processes(factory)",
            #"[{"factory":1,"process_costs_count":2},{"factory":2,"process_costs_count":4},{"factory":3,"process_costs_count":2}]"#)
        // "works on different levels of the nested resources at the same time"
        try check(
            "/process_supervisor?select=...processes(factory:factory_id,processes_count:count(),...process_costs(process_costs_count:count()))&order=processes(factory)",
            #"[{"factory":1,"processes_count":2,"process_costs_count":2},{"factory":2,"processes_count":4,"process_costs_count":4},{"factory":3,"processes_count":2,"process_costs_count":2}]"#
        )
    }

    @Test func toManySpreadsRefuseAggregates() throws {
        try check(
            "/factories?select=name,...factory_buildings(type,size.sum())",
            #"{"code":"PGRST127","message":"Feature not implemented","details":"Aggregates are not implemented for one-to-many or many-to-many spreads.","hint":null}"#,
            status: 400)
    }

    /// The spec's "disallowed" cases: without `db-aggregates-enabled`, PGRST123 wherever the
    /// aggregate is.
    @Test func aggregatesDisallowed() throws {
        let server = try PostgRESTSpecAggregateTests.server(aggregates: false)
        let refused = #"{"hint":null,"details":null,"code":"PGRST123","message":"Use of aggregate functions is not allowed"}"#
        for path in [
            "/project_invoices?select=invoice_total.sum()", "/projects?select=name,project_invoices(invoice_total.sum())",
            "/project_invoices?select=...projects(id.count())", "/factories?select=...processes(id.count())"
        ] {
            try server.expectSpec(path, refused, status: 400)
        }
    }
}
