"""What every settings class shares: :class:`EnvSettings` (read once from keyword arguments and
the environment, a bad value reported as one line naming the variable), :func:`setting` (a field
named by its variable and documented for docs/configuration.md's table) and :class:`ConfigError`."""

from __future__ import annotations

import sys
from typing import Any, ClassVar, Self

from pydantic import Field, ValidationError
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable and the fix."""


def setting(
    variable: str,
    default: Any = PydanticUndefined,
    meaning: str = "",
    *,
    unit: str = "",
    shown_default: str | None = None,
    secret: bool = False,
    **constraints: Any,
) -> Any:
    """A settings field read from ``variable`` (no ``default``: required), documented by
    ``meaning`` and ``unit`` in docs/configuration.md's table (``shown_default`` replaces the
    default there); a ``secret`` is never printed. ``constraints`` are pydantic's (``ge``,
    ``le``, ...)."""
    extra: dict[str, str | bool] = {"unit": unit, "secret": secret}
    if shown_default is not None:
        extra["default"] = shown_default
    return Field(
        default,
        validation_alias=variable,
        description=meaning,
        json_schema_extra=extra,  # type: ignore[arg-type]
        repr=not secret,
        **constraints,
    )


class EnvSettings(BaseSettings):
    """What every settings class shares: variables named exactly (case-sensitive), empty ones
    unset, unknown ones ignored, the object frozen; read from keyword arguments, then the
    environment (no ``.env`` file, no secrets folder)."""

    model_config = SettingsConfigDict(
        case_sensitive=True,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    #: The process these settings are for (``rummy <service>: ...`` in errors and logs).
    service: ClassVar[str] = "rummy"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings

    @classmethod
    def load(cls, **values: Any) -> Self:
        """The settings from ``values`` and the environment. Raises :class:`ConfigError` naming
        every variable that is missing or malformed."""
        try:
            return cls(**values)
        except ValidationError as error:
            raise ConfigError(cls.describe(error)) from None

    @classmethod
    def load_or_exit(cls) -> Self:
        """The settings from the environment; on a :class:`ConfigError`, print ``rummy
        <service>: configuration error: ...`` to stderr and exit with status 2 (a ``main``'s
        first line, before anything is bound or connected)."""
        try:
            return cls.load()
        except ConfigError as error:
            print(f"rummy {cls.service}: configuration error: {error}", file=sys.stderr)
            raise SystemExit(2) from None

    @classmethod
    def variable(cls, name: str) -> str:
        """The variable of field ``name`` (``name`` itself when it is a variable already)."""
        field = cls.model_fields.get(name)
        alias = field.validation_alias if field is not None else None
        return alias if isinstance(alias, str) else name

    @classmethod
    def describe(cls, error: ValidationError) -> str:
        """One line for ``error``: ``A and B must be set`` for missing variables, then
        ``VAR='value': what it expects`` for each malformed one (secrets shown as ``VAR``)."""
        secret = {
            cls.variable(name)
            for name, field in cls.model_fields.items()
            if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("secret")
        }
        missing: list[str] = []
        problems: list[str] = []
        for item in error.errors(include_url=False):
            variable = cls.variable(str(item["loc"][0])) if item["loc"] else ""
            message = str(item["msg"]).removeprefix("Value error, ")
            if item["type"] == "missing":
                missing.append(variable)
            elif not variable or message.startswith(variable):
                problems.append(message)
            elif variable in secret or not isinstance(item["input"], str | int | float):
                problems.append(f"{variable}: {message}")
            else:
                problems.append(f"{variable}={str(item['input'])[:40]!r}: {message}")
        if missing:
            *others, last = sorted(missing)
            names = f"{', '.join(others)} and {last}" if others else last
            problems.insert(0, f"{names} must be set")
        return "; ".join(problems)
