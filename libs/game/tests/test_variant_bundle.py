"""A variant is one bundle installed by one call (``rummy_game.bundle``), found by the entry-point
group ``rummy.variants``: the product's Indian points so, and a package installed beside the
product adds its game with no edit to this tree."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gin_pb
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy_game import variant_wires
from rummy_game.bundle import VariantBundle, bundle_of, bundles
from rummy_platform import variant_payloads
from rummy_platform.envelope import event_payloads
from rummy_platform.errors import InvalidArgument
from rummy_platform.limits import check_request, field_limits, register_field_limits
from rummy_rules import json_form, registry
from rummy_rules.indian.equivalence import equivalent_results

SUPPORT = Path(__file__).resolve().parents[3] / "tests" / "support"


def test_the_indian_variant_is_an_installed_bundle_found_by_its_entry_point() -> None:
    (point,) = [p for p in entry_points(group="rummy.variants") if p.name == "indian-points"]
    bundle = point.load()
    assert isinstance(bundle, VariantBundle)
    assert bundle.name == "indian-points"
    # every host registry holds what the bundle brought, and only by that bundle
    assert registry.lookup("indian-points") is bundle.variant
    assert bundle.name == registry.LEGACY_VARIANT  # what the upcast names for old records
    assert variant_wires.lookup("indian-points") is bundle.wire
    assert set(bundle.payload_modules) <= set(variant_payloads.modules())
    for cls in bundle.codec_classes:
        assert json_form.registered(json_form.tag_of(cls)) is cls
    assert bundle.variant.bot is not None
    assert bundle.verifier_script == "indian-score.js"
    # what the hosts read of it: replay's judge of equivalent groupings, its request limits
    assert bundle_of("indian-points") is bundle and bundle_of("") is None
    assert bundle.equivalent_results is equivalent_results
    own = field_limits("indian-points")
    assert own["groups"] == 13 and own["cards"] == 14


def test_old_type_names_of_a_bundle_are_read_as_its_messages() -> None:
    payloads = event_payloads()
    assert payloads.class_for("rummy.table.v1.Declared").DESCRIPTOR.full_name == (
        "rummy.indian.v1.Declared"
    )


def test_a_bundle_whose_wire_is_another_variants_is_refused() -> None:
    from toy_variant.wire import TOY_WIRE

    with pytest.raises(ValueError, match="is not the variant 'indian-points'"):
        VariantBundle(variant=registry.lookup("indian-points"), wire=TOY_WIRE)


def test_installing_a_bundle_twice_is_harmless_and_another_under_its_name_is_refused() -> None:
    from toy_variant.wire import TOY_BUNDLE

    TOY_BUNDLE.install()
    TOY_BUNDLE.install()
    assert registry.lookup(TOY_BUNDLE.name) is TOY_BUNDLE.variant
    copy = VariantBundle(variant=type(TOY_BUNDLE.variant)(), wire=TOY_BUNDLE.wire)
    with pytest.raises(ValueError, match="another variant is registered as 'toy-knock'"):
        copy.install()


_PACKAGE = '''
"""A variant shipped by a package of its own (here: the toy, under another name)."""
from dataclasses import dataclass
from toy_variant.game import ToyKnock
from toy_variant.wire import ToyWire, toy_pb2
from rummy_game.bundle import VariantBundle, bundle_of, bundles

class AcmeKnock(ToyKnock):
    name = "acme-knock"

class AcmeWire(ToyWire):
    variant = "acme-knock"

ACME_BUNDLE = VariantBundle(variant=AcmeKnock(), wire=AcmeWire())
'''

_CHECK = """
import sys
from rummy_rules import registry
from rummy_game import variant_wires
print(",".join(registry.names()), variant_wires.lookup("acme-knock").variant,
      "acme_gin" in sys.modules)
"""


@pytest.mark.integration
def test_an_installed_package_adds_its_variant_with_no_edit_to_the_tree(tmp_path: Path) -> None:
    """A distribution on the path (its ``*.dist-info`` declares the entry point, as ``pip
    install`` writes it) is found by every host: nobody names or imports it."""
    (tmp_path / "acme_gin.py").write_text(_PACKAGE)
    info = tmp_path / "acme_gin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-gin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[rummy.variants]\nacme-knock = acme_gin:ACME_BUNDLE\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SUPPORT)])}
    env.pop("RUMMY_VARIANT_PLUGINS", None)
    done = subprocess.run(
        [sys.executable, "-c", _CHECK], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # (the toy, which the package builds on, is installed by its import, as a plug-in is)
    names, wire_of, imported = done.stdout.split()
    installed = {bundle.variant.name for bundle in bundles()}  # the product's, found alike
    assert set(names.split(",")) == installed | {"acme-knock", "toy-knock"}
    assert (wire_of, imported) == ("acme-knock", "True")


def test_two_variants_limit_a_field_of_the_same_name_each_its_own_way() -> None:
    """Indian points' declared group holds at most 14 cards, gin's named meld at most 10 (their
    .proto comments): one ``cards`` field name, each variant's command held to its own limit."""
    card = cards_pb2.Card(index=3, face="4C")
    assert field_limits("indian-points")["cards"] == 14 and field_limits("gin")["cards"] == 10
    assert field_limits()["cards"] == 14  # before the variant is known: the loosest
    declare = indian_pb.Declare(groups=[cards_pb2.CardGroup(cards=[card] * 14)])
    check_request(declare, "command.", "indian-points")
    knock = gin_pb.Knock(melds=[cards_pb2.CardGroup(cards=[card] * 11)])
    with pytest.raises(
        InvalidArgument, match=r"command\.melds\[0\]\.cards has 11 items; at most 10"
    ):
        check_request(knock, "command.", "gin")
    check_request(gin_pb.Knock(melds=[cards_pb2.CardGroup(cards=[card] * 10)]), "", "gin")
    with pytest.raises(InvalidArgument, match=r"groups\[0\]\.cards has 15 items; at most 14"):
        check_request(
            indian_pb.Declare(groups=[cards_pb2.CardGroup(cards=[card] * 15)]), "", "indian-points"
        )


def test_a_variant_may_not_limit_a_hosts_field_nor_change_its_own_limit() -> None:
    register_field_limits("limits-test", {"cards": 5})
    register_field_limits("limits-test", {"cards": 5})  # installing twice is harmless
    assert field_limits("limits-test")["cards"] == 5 and field_limits("gin")["cards"] == 10
    with pytest.raises(ValueError, match="'cards' is set already"):
        register_field_limits("limits-test", {"cards": 6})
    with pytest.raises(ValueError, match="'table_id' is set already"):
        register_field_limits("limits-test", {"table_id": 10})
