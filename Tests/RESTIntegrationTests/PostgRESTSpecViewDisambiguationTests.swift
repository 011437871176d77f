import Foundation
import TestSupport
import Testing

/// EmbedDisambiguationSpec's cases that go through views, on `PostgRESTSpecViewTests`'s
/// fixtures and server: hints naming a key or a column of a view's relationship, PGRST201 listing
/// the candidates through views in PostgREST's order, a key's name or column as the target
/// choosing the table over a view of it.
@Suite("PostgREST spec cases: embed disambiguation through views", .serialized)
struct PostgRESTSpecViewDisambiguationTests {
    let base: PostgRESTSpecViewTests

    init() throws { base = try PostgRESTSpecViewTests() }

    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try base.check(path, expected, status: status, sourceLocation: sourceLocation)
    }

    /// "ambiguous requests that give 300 Multiple Choices": a view junction beside a table
    /// junction, a circular reference, a view showing a composite key's columns twice.
    @Test func ambiguousRelationships() throws {
        try check(
            "/sites?select=*,big_projects(*)",
            #"{"details":[{"cardinality":"many-to-one","relationship":"main_project using sites(main_project_id) and big_projects(big_project_id)","embedding":"sites with big_projects"},{"cardinality":"many-to-many","relationship":"jobs using jobs_site_id_fkey(site_id) and jobs_big_project_id_fkey(big_project_id)","embedding":"sites with big_projects"},{"cardinality":"many-to-many","relationship":"main_jobs using jobs_site_id_fkey(site_id) and jobs_big_project_id_fkey(big_project_id)","embedding":"sites with big_projects"}],"hint":"Try changing 'big_projects' to one of the following: 'big_projects!main_project', 'big_projects!jobs', 'big_projects!main_jobs'. Find the desired relationship in the 'details' key.","message":"Could not embed because more than one relationship was found for 'sites' and 'big_projects'","code":"PGRST201"}"#,
            status: 300)
        // The spec also checks its length: the same bytes, in another key order.
        let sites = try base.server.client().request(
            "GET", "/rest/v1/sites?select=*,big_projects(*)", headers: base.server.headers(nil, [("Accept-Profile", "spec")]))
        #expect(sites.header("Content-Length") == "828", "\(sites.text)")
        try check(
            "/agents?select=*,departments(*)",
            #"{"details":[{"cardinality":"one-to-many","relationship":"departments_head_id_fkey using agents(id) and departments(head_id)","embedding":"agents with departments"},{"cardinality":"many-to-one","relationship":"agents_department_id_fkey using agents(department_id) and departments(id)","embedding":"agents with departments"}],"hint":"Try changing 'departments' to one of the following: 'departments!departments_head_id_fkey', 'departments!agents_department_id_fkey'. Find the desired relationship in the 'details' key.","message":"Could not embed because more than one relationship was found for 'agents' and 'departments'","code":"PGRST201"}"#,
            status: 300)
        let key = "i2459_composite_t2_t1_a_t1_b_fkey"
        let candidates = ["t1_a1, t1_b1", "t1_a1, t1_b2", "t1_a2, t1_b1", "t1_a2, t1_b2"].map {
            #"{"cardinality":"many-to-one","embedding":"i2459_composite_v2 with i2459_composite_v1","relationship":"\#(key) using i2459_composite_v2(\#($0)) and i2459_composite_v1(a, b)"}"#
        }
        let hint = Array(repeating: "'i2459_composite_v1!\(key)'", count: 4).joined(separator: ", ")
        try check(
            "/i2459_composite_v2?select=*,i2459_composite_v1(*)",
            #"{"code":"PGRST201","details":[\#(candidates.joined(separator: ","))],"hint":"Try changing 'i2459_composite_v1' to one of the following: \#(hint). Find the desired relationship in the 'details' key.","message":"Could not embed because more than one relationship was found for 'i2459_composite_v2' and 'i2459_composite_v1'"}"#,
            status: 300)
    }

    /// "using FK to specify the relationship" and "using the column name of the FK …" through
    /// views.
    @Test func hintsThroughViews() throws {
        try check(
            "/tasks?id=eq.1&select=id,name,projects_view!project(id,name,client(id,name))",
            #"[{"id":1,"name":"Design w7","projects_view":{"id":1,"name":"Windows 7","client":{"id":1,"name":"Microsoft"}}}]"#)
        try check(
            "/tasks?id=eq.1&select=id,name,project:projects_view!project_id(id,name,client:client_id(id,name))",
            #"[{"id":1,"name":"Design w7","project":{"id":1,"name":"Windows 7","client":{"id":1,"name":"Microsoft"}}}]"#)
        try check(
            "/articleStars?select=createdAt,article:articles(id),user(name)&limit=1",
            #"[{"createdAt":"2015-12-08T04:22:57.472738","article":{"id": 1},"user":{"name": "Angela Martin"}}]"#)
        try check(
            "/message?select=id,body,sender:person_detail!message_sender_fkey(name,sent),recipient:person_detail!message_recipient_fkey(name,received)&id=lt.4&order=id",
            #"[{"id":1,"body":"Hello Jane","sender":{"name":"John","sent":2},"recipient":{"name":"Jane","received":2}},{"id":2,"body":"Hi John","sender":{"name":"Jane","sent":1},"recipient":{"name":"John","received":1}},{"id":3,"body":"How are you doing?","sender":{"name":"John","sent":2},"recipient":{"name":"Jane","received":2}}]"#
        )
        try check(
            "/unit_workdays?select=unit_id,day,fst_shift(car_id,schedule(name)),snd_shift(camera_id,schedule(name))",
            #"[{"day":"2019-12-02","fst_shift":{"car_id":"CAR-349","schedule":{"name":"morning"}},"snd_shift":{"camera_id":"CAM-123","schedule":{"name":"night"}},"unit_id":1}]"#
        )
        try check(
            "/sites?select=*,big_projects!jobs(name)&site_id=in.(1,2)",
            #"[{"big_projects":[{"name":"big project 1"}],"main_project_id":1,"name":"site 1","site_id":1},{"big_projects":[{"name":"big project 1"},{"name":"big project 2"}],"main_project_id":null,"name":"site 2","site_id":2}]"#
        )
        try check(
            "/sites?select=*,big_projects!main_jobs(name)&site_id=in.(1,2)",
            #"[{"big_projects":[{"name":"big project 1"}],"main_project_id":1,"name":"site 1","site_id":1},{"big_projects":[],"main_project_id":null,"name":"site 2","site_id":2}]"#
        )
        try check("/sites?select=name,main_project(name)&site_id=eq.1", #"[{"name":"site 1","main_project":{"name":"big project 1"}}]"#)
        try check("/sites?select=name,main_project_id(name)&site_id=eq.1", #"[{"name":"site 1","main_project_id":{"name":"big project 1"}}]"#)
        // "can specify all view column names that reference the same base column"
        for path in [
            "/i2459_simple_v1?select=*,i2459_simple_v2!t1_id1(*)", "/i2459_simple_v1?select=*,i2459_simple_v2!t1_id2(*)",
            "/i2459_simple_v2?select=*,i2459_simple_v1!t1_id1(*)", "/i2459_simple_v2?select=*,i2459_simple_v1!t1_id2(*)",
            "/i2459_self_v1?select=*,parent(*),grandparent(*)", "/i2459_self_v2?select=*,parent(*),grandparent(*)"
        ] {
            try check(path, "[]")
        }
    }

    /// A view with a key to itself ("embeds parent and then embeds children on a view"), and
    /// "embedding with col as a target doesn't consider views".
    @Test func viewsAsTargets() throws {
        try check(
            "/job?select=id,parent_id(*),children:job!parent_id(id,parent_id)&order=id",
            #"[{"id":1,"parent_id":null,"children":[{"id":2,"parent_id":1}]},{"id":2,"parent_id":{"id":1,"parent_id":null},"children":[]}]"#)
        try check("/adaptation_notifications?select=id,status,series(*)", "[]")
        try check("/adaptation_notifications?select=id,status,series_popularity(*)", "[]")
        try check("/message?select=id,body,sender(id,name)&id=eq.5", #"[{"id":5,"body":"What's up Jake","sender":{"id":4,"name":"Julie"}}]"#)
        try check(
            "/activities?select=fst_shift(*)",
            #"[{"fst_shift":[{"unit_id":1,"day":"2019-12-02","fst_shift_activity_id":1,"fst_shift_schedule_id":1,"snd_shift_activity_id":2,"snd_shift_schedule_id":3}]},{"fst_shift":[]}]"#
        )
        // "should not expose hidden FKs"
        let response = try base.server.client().request(
            "GET", "/rest/v1/va?select=vb(*)", headers: base.server.headers(nil, [("Accept-Profile", "spec")]))
        #expect(response.status == 200, "\(response.text)")
    }
}
