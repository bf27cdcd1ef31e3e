import shutil
from pathlib import Path

import pytest
import yaml

from runbooks.catalog import DEFAULT_DIR


class CatalogCopy:
    """A writable copy of the real catalogue, with a helper to change one file in it."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        shutil.copytree(DEFAULT_DIR, directory)

    def file(self, name: str) -> Path:
        return self.dir / name

    def edit(self, slug: str, change) -> Path:
        path = self.dir / f"{slug}.yaml"
        doc = yaml.safe_load(path.read_text())
        change(doc)
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path


@pytest.fixture
def catalog_copy(tmp_path):
    return CatalogCopy(tmp_path / "catalog")
