"""The package boundary and the docstring examples."""

from __future__ import annotations

import ast
import doctest
import importlib
import pathlib

import pytest

import knotwork.ingest

MODULES = ["__init__", "markdown", "frontmatter", "links", "lexicon", "extract"]
ALLOWED = {"knotwork.types", "knotwork.errors"}


@pytest.mark.parametrize("name", MODULES)
def test_ingest_imports_only_types_and_errors(name: str) -> None:
    path = pathlib.Path(knotwork.ingest.__file__).with_name(f"{name}.py")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 2:
            assert f"knotwork.{node.module}" in ALLOWED, (name, node.module)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            assert not node.module.startswith("knotwork") or node.module in ALLOWED
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("knotwork") for a in node.names)


@pytest.mark.parametrize("name", ["markdown", "lexicon"])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"knotwork.ingest.{name}")
    failed, attempted = doctest.testmod(module)
    assert attempted and not failed


def test_public_api() -> None:
    assert knotwork.ingest.__all__ == ["EXTRACTION_RULES", "MENTION_RULES", "extraction_key",
                                      "parse_markdown"]
