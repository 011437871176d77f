"""Supabase Storage through supabase-py's storage client (`client.storage`), unchanged, against
the real server: buckets, uploads, downloads, listing, moves, copies, removal, signed URLs, and
the avatars bucket's policies (each user's own folder; co-parents read the children's pictures)."""
import uuid

import httpx
import pytest
from storage3.exceptions import StorageApiError
from supabase import ClientOptions, create_client

from conftest import ANON_KEY, SERVICE_ROLE_KEY, URL, new_client, unique_email


def service_client():
    return create_client(URL, SERVICE_ROLE_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def sign_up(name: str):
    c = new_client()
    response = c.auth.sign_up({"email": unique_email("sto"), "password": "Secret-pass-1", "options": {"data": {"full_name": name}}})
    assert response.session is not None
    return c, response.user.id


@pytest.fixture
def bucket():
    admin = service_client()
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    admin.storage.create_bucket(name, options={"public": False, "file_size_limit": 1024 * 1024, "allowed_mime_types": ["text/*", "image/*"]})
    yield admin, name
    admin.storage.empty_bucket(name)
    admin.storage.delete_bucket(name)


def test_buckets(bucket):
    admin, name = bucket
    got = admin.storage.get_bucket(name)
    assert got.id == name and got.public is False and got.file_size_limit == 1024 * 1024
    assert name in [b.id for b in admin.storage.list_buckets()]
    admin.storage.update_bucket(name, {"public": True, "file_size_limit": 2048, "allowed_mime_types": ["text/plain"]})
    assert admin.storage.get_bucket(name).public is True
    with pytest.raises(StorageApiError) as missing:
        admin.storage.get_bucket("no-such-bucket")
    assert missing.value.status == "404"
    admin.storage.from_(name).upload("x.txt", b"x")
    with pytest.raises(StorageApiError) as not_empty:
        admin.storage.delete_bucket(name)
    assert not_empty.value.status == "409"


def test_upload_download_list_move_copy_remove(bucket):
    admin, name = bucket
    files = admin.storage.from_(name)
    uploaded = files.upload("docs/hello.txt", b"hello world", {"content-type": "text/plain", "cache-control": "120"})
    assert uploaded.full_path == f"{name}/docs/hello.txt"
    assert files.download("docs/hello.txt") == b"hello world"
    with pytest.raises(StorageApiError) as duplicate:
        files.upload("docs/hello.txt", b"again")
    assert duplicate.value.status == "409"
    files.upload("docs/hello.txt", b"replaced", {"upsert": "true", "content-type": "text/plain"})
    assert files.download("docs/hello.txt") == b"replaced"
    files.update("docs/hello.txt", b"updated", {"content-type": "text/plain"})
    assert files.download("docs/hello.txt") == b"updated"
    info = files.info("docs/hello.txt")
    assert info["size"] == len(b"updated") and info["content_type"] == "text/plain"
    assert files.exists("docs/hello.txt") and not files.exists("docs/none.txt")
    with pytest.raises(StorageApiError) as wrong_type:
        files.upload("docs/a.bin", b"\0", {"content-type": "application/octet-stream"})
    assert wrong_type.value.status == "415"

    files.upload("docs/b.txt", b"b", {"content-type": "text/plain"})
    files.upload("top.txt", b"t", {"content-type": "text/plain"})
    assert [e["name"] for e in files.list()] == ["docs", "top.txt"]
    listed = files.list("docs", {"limit": 10, "offset": 0, "sortBy": {"column": "name", "order": "desc"}})
    assert [e["name"] for e in listed] == ["hello.txt", "b.txt"]
    assert [e["name"] for e in files.list("docs", {"search": "b"})] == ["b.txt"]

    page = files.list_v2({"prefix": "docs/", "with_delimiter": True, "limit": 1})
    assert [o.name for o in page.objects] == ["docs/b.txt"] and page.hasNext and page.nextCursor == "docs/b.txt"
    rest = files.list_v2({"prefix": "docs/", "with_delimiter": True, "cursor": page.nextCursor})
    assert [o.name for o in rest.objects] == ["docs/hello.txt"] and not rest.hasNext
    folders = files.list_v2({"with_delimiter": True}).folders
    assert [f.name for f in folders] == ["docs/"] and [f.key for f in folders] == ["docs"]

    files.move("docs/b.txt", "moved/b.txt")
    assert files.download("moved/b.txt") == b"b"
    files.copy("moved/b.txt", "copied/b.txt")
    assert files.download("copied/b.txt") == b"b"
    removed = files.remove(["moved/b.txt", "copied/b.txt"])
    assert sorted(r["name"] for r in removed) == ["copied/b.txt", "moved/b.txt"]
    assert not files.exists("moved/b.txt")


def test_public_and_signed_urls(bucket):
    admin, name = bucket
    files = admin.storage.from_(name)
    files.upload("pic.png", b"\x89PNG", {"content-type": "image/png"})
    signed = files.create_signed_url("pic.png", 60)
    answer = httpx.get(signed["signedURL"])
    assert answer.status_code == 200 and answer.content == b"\x89PNG"
    downloaded = httpx.get(files.create_signed_url("pic.png", 60, {"download": "photo.png"})["signedURL"])
    assert downloaded.headers["content-disposition"] == "attachment; filename=photo.png; filename*=UTF-8''photo.png"
    many = files.create_signed_urls(["pic.png", "none.png"], 60)
    assert many[0]["signedURL"] and many[1]["signedURL"] is None and many[1]["error"]
    # The bucket is private: no public URL yet.
    assert httpx.get(files.get_public_url("pic.png")).status_code == 404
    admin.storage.update_bucket(name, {"public": True})
    assert httpx.get(files.get_public_url("pic.png")).content == b"\x89PNG"

    upload = files.create_signed_upload_url("via-link.txt")
    anonymous = new_client().storage.from_(name)
    anonymous.upload_to_signed_url(upload["path"], upload["token"], b"no session", {"content-type": "text/plain"})
    assert files.download("via-link.txt") == b"no session"


def test_avatars_policies():
    mum, mum_id = sign_up("Mum")
    dad, _ = sign_up("Dad")
    stranger, stranger_id = sign_up("Stranger")
    code = mum.rpc("create_family", {"name": "Family"}).execute().data["invite_code"]
    dad.rpc("join_family", {"code": code}).execute()

    mine = mum.storage.from_("avatars")
    mine.upload(f"{mum_id}/me.png", b"mum", {"content-type": "image/png"})
    mine.upload(f"{mum_id}/children/kit.png", b"kit", {"content-type": "image/png"})
    assert mine.download(f"{mum_id}/me.png") == b"mum"
    assert [e["name"] for e in mine.list(mum_id)] == ["children", "me.png"]

    # Dad reads the children's pictures, not Mum's own, and writes nothing of hers.
    dads = dad.storage.from_("avatars")
    assert dads.download(f"{mum_id}/children/kit.png") == b"kit"
    assert httpx.get(dads.create_signed_url(f"{mum_id}/children/kit.png", 60)["signedURL"]).content == b"kit"
    with pytest.raises(StorageApiError) as hidden:
        dads.download(f"{mum_id}/me.png")
    assert hidden.value.status == "404"
    with pytest.raises(StorageApiError) as refused:
        dads.upload(f"{mum_id}/children/kit.png", b"dad", {"upsert": "true", "content-type": "image/png"})
    assert refused.value.status == "403"

    # A stranger and anon see nothing; nobody writes into another's folder.
    with pytest.raises(StorageApiError):
        stranger.storage.from_("avatars").download(f"{mum_id}/children/kit.png")
    with pytest.raises(StorageApiError) as foreign:
        mine.upload(f"{stranger_id}/x.png", b"x", {"content-type": "image/png"})
    assert foreign.value.status == "403"
    with pytest.raises(StorageApiError):
        new_client().storage.from_("avatars").download(f"{mum_id}/me.png")
    assert stranger.storage.from_("avatars").list(mum_id) == []

    mine.remove([f"{mum_id}/me.png", f"{mum_id}/children/kit.png"])
    assert mine.list(mum_id) == []
    assert ANON_KEY
