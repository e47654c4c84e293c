"""File uploads (multipart, or a raw body with ?channel_id=&filename=), file info and download."""

from __future__ import annotations

import mimetypes
from typing import Any
from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.responses import Response
from starlette.routing import Route

from mcp_wrappers.mattermost_compat import ids, perms, views
from mcp_wrappers.mattermost_compat.api_posts import FILE_COLUMNS
from mcp_wrappers.mattermost_compat.db import Row
from mcp_wrappers.mattermost_compat.errors import ApiError, bad_param, forbidden
from mcp_wrappers.mattermost_compat.web import Ctx, endpoint

MAX_FILE_BYTES = 50 * 1024 * 1024


async def _uploads(ctx: Ctx) -> tuple[str, list[tuple[str, bytes]], list[str]]:
    """(channel_id, [(name, data)], client_ids) from either upload style Mattermost accepts."""
    if ctx.request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await ctx.request.form(max_files=10)
        channel_id = str(form.get("channel_id") or ctx.query("channel_id"))
        files = [
            (f.filename or "file", await f.read()) for f in form.getlist("files") if isinstance(f, UploadFile)
        ]
        client_ids = [str(c) for c in form.getlist("client_ids")]
    else:
        channel_id = ctx.query("channel_id")
        name = ctx.query("filename")
        if not name:
            raise bad_param("filename", "url")
        files, client_ids = [(name, await ctx.request.body())], []
    if not ids.is_id(channel_id):
        raise bad_param("channel_id")
    if not files:
        raise ApiError(
            400,
            "api.file.upload_file.incorrect_number_of_files.app_error",
            "Unable to upload files. Incorrect number of files specified.",
        )
    return channel_id, files, client_ids


async def upload(ctx: Ctx) -> tuple[int, Any]:
    channel_id, files, client_ids = await _uploads(ctx)
    channel = await ctx.tx.one("SELECT * FROM channels WHERE id = %s AND delete_at = 0", channel_id)
    if channel is None:
        raise forbidden("upload_file")
    await perms.require_member(ctx, channel, "upload_file")
    infos = []
    for name, data in files:
        if len(data) > MAX_FILE_BYTES:
            raise ApiError(
                413,
                "api.file.upload_file.too_large_detailed.app_error",
                f"Unable to upload file {name}. File is too large.",
            )
        now = ids.now_ms()
        extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
        row = await ctx.tx.one(
            f"INSERT INTO files (id, creator_id, channel_id, name, extension, size, mime_type, data, create_at, "
            f"update_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING {FILE_COLUMNS}",
            ids.new_id(),
            ctx.me["id"],
            channel_id,
            name,
            extension,
            len(data),
            mime,
            data,
            now,
            now,
        )
        infos.append(views.file_info(row))
    return 201, {"file_infos": infos, "client_ids": client_ids}


async def _readable_file(ctx: Ctx, file_id: str, columns: str = FILE_COLUMNS) -> Row:
    row = await ctx.tx.one(f"SELECT {columns} FROM files WHERE id = %s AND delete_at = 0", file_id)
    if row is None:
        raise ApiError(
            404, "app.file_info.get.app_error", "Unable to get the file info.", f"file_id={file_id}"
        )
    if row["creator_id"] != ctx.me["id"] and not ctx.is_admin:
        if not row["post_id"]:
            raise forbidden("read_channel")
        await perms.require_read(ctx, await perms.get_channel(ctx.tx, row["channel_id"]))
    return row


async def file_info(ctx: Ctx) -> tuple[int, Any]:
    return 200, views.file_info(await _readable_file(ctx, ctx.path("file_id")))


async def download(ctx: Ctx) -> Response:
    row = await _readable_file(ctx, ctx.path("file_id"), FILE_COLUMNS + ", data")
    disposition = f"attachment; filename*=UTF-8''{quote(row['name'])}"
    return Response(
        bytes(row["data"]),
        media_type=row["mime_type"],
        headers={"Content-Disposition": disposition, "X-Request-Id": ctx.request_id},
    )


async def _image(ctx: Ctx, kind: str) -> Response:
    """Thumbnail or preview: the image itself (Mattermost scales it down; no image library here)."""
    row = await _readable_file(ctx, ctx.path("file_id"), FILE_COLUMNS + ", data")
    if row["mime_type"] not in views.PREVIEWABLE:
        what = "a thumbnail" if kind == "thumbnail" else "a preview"
        raise ApiError(
            400, f"api.file.get_file_{kind}.no_{kind}.app_error", f"File doesn't have {what} image."
        )
    disposition = f"inline;filename*=UTF-8''{quote(row['name'])}"
    return Response(
        bytes(row["data"]),
        media_type=row["mime_type"],
        headers={"Content-Disposition": disposition, "X-Request-Id": ctx.request_id},
    )


async def thumbnail(ctx: Ctx) -> Response:
    return await _image(ctx, "thumbnail")


async def preview(ctx: Ctx) -> Response:
    return await _image(ctx, "preview")


async def public_link(ctx: Ctx) -> tuple[int, Any]:
    """Public links are off, as by default in Mattermost (FileSettings.EnablePublicLink)."""
    raise ApiError(403, "api.file.get_public_link.disabled.app_error", "Public links have been disabled.")


ROUTES = [
    Route("/api/v4/files", endpoint(upload), methods=["POST"]),
    Route("/api/v4/files/{file_id}", endpoint(download), methods=["GET"]),
    Route("/api/v4/files/{file_id}/info", endpoint(file_info), methods=["GET"]),
    Route("/api/v4/files/{file_id}/thumbnail", endpoint(thumbnail), methods=["GET"]),
    Route("/api/v4/files/{file_id}/preview", endpoint(preview), methods=["GET"]),
    Route("/api/v4/files/{file_id}/link", endpoint(public_link), methods=["GET"]),
]
