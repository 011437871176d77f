"""Resumable uploads (TUS) through a real TUS client, tuspy, against the real server's
/storage/v1/upload/resumable, as Supabase's docs have apps do it (bearer token, apikey,
x-upsert, the bucketName/objectName/contentType/cacheControl metadata); the objects are then
read back with supabase-py's storage client."""
import io
import os
import uuid

import pytest
from supabase import ClientOptions, create_client
from tusclient import client as tus
from tusclient.exceptions import TusCommunicationError

from conftest import ANON_KEY, SERVICE_ROLE_KEY, URL, new_client, unique_email

ENDPOINT = f"{URL}/storage/v1/upload/resumable"


def service_client():
    return create_client(URL, SERVICE_ROLE_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def tus_client(token: str, upsert: bool = False) -> tus.TusClient:
    headers = {"Authorization": f"Bearer {token}", "apikey": ANON_KEY}
    if upsert:
        headers["x-upsert"] = "true"
    return tus.TusClient(ENDPOINT, headers=headers)


def metadata(bucket: str, name: str, content_type: str = "application/octet-stream") -> dict:
    return {"bucketName": bucket, "objectName": name, "contentType": content_type, "cacheControl": "3600"}


@pytest.fixture
def bucket():
    admin = service_client()
    name = f"tus-{uuid.uuid4().hex[:8]}"
    admin.storage.create_bucket(name, options={"public": False, "file_size_limit": 2 * 1024 * 1024})
    yield admin, name
    admin.storage.empty_bucket(name)
    admin.storage.delete_bucket(name)


def test_chunked_upload_resumed_by_a_new_uploader(bucket):
    admin, name = bucket
    data = os.urandom(600 * 1024 + 123)
    first = tus_client(SERVICE_ROLE_KEY).uploader(
        file_stream=io.BytesIO(data), chunk_size=128 * 1024, metadata=metadata(name, "video/clip.bin", "video/mp4"))
    first.upload(stop_at=256 * 1024)  # the connection "drops" here
    assert first.offset == 256 * 1024
    assert admin.storage.from_(name).list("video") == [], "not listed before the last byte"

    # A new uploader (as after an app restart) asks the server for the offset and goes on.
    second = tus_client(SERVICE_ROLE_KEY).uploader(file_stream=io.BytesIO(data), chunk_size=200 * 1024, url=first.url)
    assert second.offset == 256 * 1024
    second.upload()
    assert second.offset == len(data)

    assert admin.storage.from_(name).download("video/clip.bin") == data
    info = admin.storage.from_(name).info("video/clip.bin")
    assert info["size"] == len(data) and info["content_type"] == "video/mp4" and info["cache_control"] == "max-age=3600"


def test_a_user_uploads_only_where_the_policies_allow():
    owner = new_client()
    session = owner.auth.sign_up({"email": unique_email("tus"), "password": "Secret-pass-1"}).session
    stranger = new_client()
    other = stranger.auth.sign_up({"email": unique_email("tus"), "password": "Secret-pass-1"}).session
    path = f"{session.user.id}/avatar.png"
    picture = os.urandom(50_000)

    refused = tus_client(other.access_token).uploader(file_stream=io.BytesIO(picture), chunk_size=20_000, metadata=metadata("avatars", path, "image/png"))
    with pytest.raises(TusCommunicationError) as error:
        refused.upload()
    assert error.value.status_code == 403

    uploader = tus_client(session.access_token).uploader(file_stream=io.BytesIO(picture), chunk_size=20_000, metadata=metadata("avatars", path, "image/png"))
    uploader.upload()
    assert owner.storage.from_("avatars").download(path) == picture

    again = tus_client(session.access_token, upsert=True).uploader(
        file_stream=io.BytesIO(b"replaced"), metadata=metadata("avatars", path, "image/png"))
    again.upload()
    assert owner.storage.from_("avatars").download(path) == b"replaced"
    owner.storage.from_("avatars").remove([path])


def test_the_buckets_size_limit(bucket):
    _, name = bucket
    uploader = tus_client(SERVICE_ROLE_KEY).uploader(file_stream=io.BytesIO(os.urandom(3 * 1024 * 1024)), metadata=metadata(name, "big.bin"))
    with pytest.raises(TusCommunicationError) as error:
        uploader.upload()
    assert error.value.status_code == 413
    assert "Maximum size exceeded" in str(error.value.response_content)
