"""PostgREST behaviour supabase-py's own postgrest tests exercise: `.explain()` (scripts/e2e
starts the main server with PGRST_DB_PLAN_ENABLED=true) and `count=` on an RPC."""
import json


def test_explain_answers_the_plan(signed_up):
    client, user, _ = signed_up
    text = client.table("children").select("*").explain().execute()
    assert "children" in str(text)
    plan = client.table("children").select("id").explain(format="json", verbose=True).execute()
    body = plan.data if not isinstance(plan.data, str) else json.loads(plan.data)
    first = body[0] if isinstance(body, list) else body
    assert "Plan" in first


def test_rpc_count_is_the_number_of_rows(signed_up):
    client, user, _ = signed_up
    response = client.rpc("get_user_with_profile", {"p_user_id": user.id}, count="exact").execute()
    assert response.count == 1
    assert len(response.data) == 1
    head = client.rpc("get_user_with_profile", {"p_user_id": user.id}, count="exact", head=True).execute()
    assert head.count == 1
