"""The HTTP APIs the OpenAPI tests call, run by uvicorn in a subprocess
(``python api_apps.py PORT``): a FastAPI application ("shop", whose document FastAPI generates,
at ``/openapi.json``), with the API of the hand-written 3.1 document ``zoo.yaml`` mounted at
``/zoo`` (plain handlers: that document is not generated).
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from typing import Annotated, Any

import uvicorn
from fastapi import FastAPI, File, Form, Header, HTTPException, Query, Request, UploadFile
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, Field

shop = FastAPI(title="Shop", version="1.2.0")


class Item(BaseModel):
    name: str
    price: float = Field(gt=0)
    tags: list[str] = []
    description: str | None = None


class Stock(BaseModel):
    item_id: int
    level: int


items: dict[int, Item] = {1: Item(name="kettle", price=25.0, tags=["kitchen"])}


@shop.get("/items", operation_id="list_items", tags=["items"], summary="List the items")
async def list_items(limit: int = 10, tag: str | None = None) -> list[dict[str, Any]]:
    found = [
        {"id": key, **item.model_dump()}
        for key, item in sorted(items.items())
        if tag is None or tag in item.tags
    ]
    return found[:limit]


@shop.get("/items/{item_id}", operation_id="get_item", tags=["items"])
async def get_item(item_id: int) -> dict[str, Any]:
    """Get one item by its id."""
    if item_id not in items:
        raise HTTPException(404, detail=f"no item {item_id}")
    return {"id": item_id, **items[item_id].model_dump()}


@shop.post("/items", operation_id="create_item", tags=["items"], status_code=201)
async def create_item(item: Item) -> dict[str, Any]:
    key = max(items, default=0) + 1
    items[key] = item
    return {"id": key, **item.model_dump()}


@shop.put("/items/{item_id}", operation_id="replace_item", tags=["items"])
async def replace_item(item_id: int, item: Item) -> dict[str, Any]:
    if item_id not in items:
        raise HTTPException(404, detail=f"no item {item_id}")
    items[item_id] = item
    return {"id": item_id, **item.model_dump()}


@shop.delete("/items/{item_id}", operation_id="delete_item", tags=["items"], status_code=204)
async def delete_item(item_id: int) -> Response:
    if items.pop(item_id, None) is None:
        raise HTTPException(404, detail=f"no item {item_id}")
    return Response(status_code=204)


@shop.get("/items/{item_id}/label", operation_id="item_label", response_class=PlainTextResponse)
async def item_label(item_id: int) -> str:
    if item_id not in items:
        raise HTTPException(404, detail=f"no item {item_id}")
    item = items[item_id]
    return f"{item.name.upper()} ... {item.price:.2f} EUR"


# No operation_id: FastAPI names it (search_search_get).
@shop.get("/search", tags=["search"])
async def search(
    q: Annotated[list[str], Query()],
    x_request_id: Annotated[str | None, Header()] = None,
) -> dict[str, Any]:
    return {"terms": q, "request_id": x_request_id}


@shop.get("/stock/{item_id}", operation_id="stock.level/get", tags=["stock"])
async def stock_level(item_id: int) -> Stock:
    return Stock(item_id=item_id, level=item_id * 10)


@shop.get("/whoami", operation_id="whoami", tags=["auth"])
async def whoami(x_api_key: Annotated[str | None, Header()] = None) -> dict[str, str]:
    if x_api_key is None:
        return JSONResponse({"detail": "an X-API-Key is needed"}, status_code=401)  # type: ignore[return-value]
    return {"key": x_api_key}


@shop.post("/upload", operation_id="upload_file", tags=["files"])
async def upload_file(
    file: Annotated[UploadFile, File()], note: Annotated[str, Form()] = ""
) -> dict[str, Any]:
    data = await file.read()
    return {
        "filename": file.filename,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "note": note,
    }


@shop.get("/boom", operation_id="boom", tags=["errors"])
async def boom() -> dict[str, Any]:
    return JSONResponse({"detail": "x" * 5000}, status_code=500)  # type: ignore[return-value]


slow_calls = {"started": 0, "disconnected": 0}


@shop.get("/slow", operation_id="slow", tags=["timing"])
async def slow(request: Request) -> dict[str, Any]:
    """Answer after 10 s, unless the client goes away first (which is counted)."""
    slow_calls["started"] += 1
    for _ in range(200):
        if await request.is_disconnected():
            slow_calls["disconnected"] += 1
            return {}
        await asyncio.sleep(0.05)
    return {"finished": True}


@shop.get("/slow/calls", operation_id="slow_calls", tags=["timing"])
async def count_slow_calls() -> dict[str, int]:
    return slow_calls


# ---------------------------------------------------------------- the zoo (zoo.yaml)

zoo = FastAPI(openapi_url=None)
animals: dict[int, dict[str, Any]] = {}


@zoo.post("/animals")
async def add_animal(request: Request) -> JSONResponse:
    animal = await request.json()
    if animal.get("kind") not in ("cat", "dog"):
        return JSONResponse({"error": "kind must be cat or dog"}, status_code=422)
    key = len(animals) + 1
    animals[key] = {"id": key, **animal}
    return JSONResponse(animals[key], status_code=201)


@zoo.get("/animals")
async def list_animals() -> list[dict[str, Any]]:
    return list(animals.values())


@zoo.get("/animals/{animal_id}")
async def get_animal(animal_id: int) -> JSONResponse:
    if animal_id not in animals:
        return JSONResponse({"error": f"no animal {animal_id}"}, status_code=404)
    return JSONResponse(animals[animal_id])


@zoo.post("/enclosures")
async def create_enclosure(request: Request) -> JSONResponse:
    enclosure = await request.json()
    names = [animal["name"] for animal in enclosure.get("animals", [])]
    answer = {"name": enclosure["name"], "area": enclosure["area"], "animals": names}
    return JSONResponse(answer, status_code=201)


@zoo.put("/keepers")
async def replace_keepers(request: Request) -> dict[str, Any]:
    keepers = await request.json()
    shifts = sum(len(keeper.get("shifts", [])) for keeper in keepers)
    return {"keepers": [keeper["name"] for keeper in keepers], "shifts": shifts}


@zoo.post("/photos")
async def upload_photo(request: Request) -> dict[str, Any]:
    form = await request.form()
    photo = form["photo"]
    assert not isinstance(photo, str)
    data = await photo.read()
    return {
        "filename": photo.filename,
        "content_type": photo.content_type,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "caption": form.get("caption"),
        "tags": form.getlist("tags"),
    }


def _count(node: dict[str, Any]) -> tuple[int, int]:
    children = [_count(child) for child in node.get("children", [])]
    return 1 + sum(c for c, _ in children), 1 + max((d for _, d in children), default=0)


@zoo.post("/trees")
async def plant_tree(request: Request) -> dict[str, Any]:
    count, depth = _count(await request.json())
    return {"nodes": count, "depth": depth}


@zoo.get("/feeding", response_class=PlainTextResponse)
async def feeding_times(request: Request) -> str:
    day = request.query_params.get("day", "today")
    return f"Feeding {day}: 09:00, 15:00"


shop.mount("/zoo", zoo)

if __name__ == "__main__":
    uvicorn.run(shop, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
