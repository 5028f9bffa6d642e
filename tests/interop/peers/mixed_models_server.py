"""A server whose tools mix pydantic models, msgspec Structs, dataclasses and TypedDicts, run
over stdio for tests/interop/test_sdk_client_pydantic.py."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Literal, TypedDict

import msgspec
from pydantic import BaseModel, Field, field_validator

import mcptrio


class Species(enum.Enum):
    CAT = "cat"
    DOG = "dog"


class Pet(BaseModel):
    name: str = Field(description="its name", pattern="^[A-Z]")
    age: int = Field(ge=0, le=40)
    species: Species = Species.CAT
    tags: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def strip(cls, value: str) -> str:
        return value.strip()


class Point(msgspec.Struct):
    x: int
    y: int


@dataclasses.dataclass
class Label:
    text: str


class Extra(TypedDict):
    note: str


class Receipt(BaseModel):
    pet: Pet
    where: list[int]
    label: str
    note: str
    kind: Literal["stray", "surrendered"]
    rooms: int


def build_server() -> mcptrio.Server:
    server = mcptrio.Server("mixed-models")

    @server.tool
    async def admit(
        pet: Pet,
        where: Point,
        label: Label,
        extra: Extra,
        kind: Literal["stray", "surrendered"] = "stray",
        rooms: Annotated[int, Field(gt=0, le=9, description="rooms to book")] = 1,
    ) -> Receipt:
        """Admit a pet."""
        return Receipt(
            pet=pet,
            where=[where.x, where.y],
            label=label.text,
            note=extra["note"],
            kind=kind,
            rooms=rooms,
        )

    @server.tool
    async def ages(pets: list[Pet]) -> list[int]:
        return [pet.age for pet in pets]

    @server.tool
    async def spot(x: int, y: int) -> Point:
        return Point(x, y)

    return server


if __name__ == "__main__":
    build_server().run()
