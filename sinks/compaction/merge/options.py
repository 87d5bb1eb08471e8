"""A table's merge engine and the options that shape it, with Java's own validations (same
messages): ``merge-engine``, ``ignore-delete``, ``fields.<f>.aggregate-function`` and the other
``fields.*`` options, sequence groups, ``*.remove-record-on-delete``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")
# CoreOptions.IGNORE_DELETE and its fallback keys.
IGNORE_DELETE_KEYS = (
    "ignore-delete",
    "first-row.ignore-delete",
    "deduplicate.ignore-delete",
    "partial-update.ignore-delete",
)
# Aggregate functions mirrored here, and which of them Java lets take a retraction.
RETRACTABLE = ("sum", "product", "last_value", "last_non_null_value", "collect")
FUNCTIONS = (
    *RETRACTABLE,
    *("max", "min", "first_value", "first_non_null_value", "listagg", "bool_and", "bool_or", "rbm32"),
)
_FIELD_SUFFIXES = ("aggregate-function", "ignore-retract", "list-agg-delimiter", "distinct", "sequence-group")


def _true(options: Mapping[str, str], key: str) -> bool:
    value = str(options.get(key, "false")).strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"table option {key}='{options[key]}': expected true or false")
    return value == "true"


@dataclass(frozen=True, slots=True)
class MergeOptions:
    """A table's merge engine and the options that shape it."""

    engine: str = "deduplicate"
    ignore_delete: bool = False
    ignore_update_before: bool = False
    remove_record_on_delete: bool = False  # partial-update.* or aggregation.remove-record-on-delete
    default_function: str | None = None  # fields.default-aggregate-function
    functions: Mapping[str, str] = field(default_factory=dict)  # fields.<f>.aggregate-function
    ignore_retract: frozenset[str] = frozenset()  # fields.<f>.ignore-retract=true
    delimiters: Mapping[str, str] = field(default_factory=dict)  # fields.<f>.list-agg-delimiter
    distinct: frozenset[str] = frozenset()  # fields.<f>.distinct=true
    # partial-update: fields.<s1>[,<s2>].sequence-group=<f1>,<f2>: (sequence fields, protected fields)
    sequence_groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    # partial-update.remove-record-on-sequence-group: sequence fields whose -D removes the whole row
    remove_on_sequence_group: frozenset[str] = frozenset()

    @classmethod
    def from_table_options(cls, options: Mapping[str, str]) -> MergeOptions:
        engine = str(options.get("merge-engine", "deduplicate")).strip().lower()
        if engine not in ENGINES:
            raise ValueError(f"table option merge-engine='{engine}': expected one of {', '.join(ENGINES)}")
        ignore_delete = False
        for key in IGNORE_DELETE_KEYS:  # the first key present decides, as Java's fallback keys do
            if key in options:
                ignore_delete = _true(options, key)
                break
        functions: dict[str, str] = {}
        ignore_retract: set[str] = set()
        delimiters: dict[str, str] = {}
        distinct: set[str] = set()
        groups: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for key, value in options.items():
            if not key.startswith("fields.") or key == "fields.default-aggregate-function":
                continue
            name, _, suffix = key[len("fields.") :].rpartition(".")
            if suffix not in _FIELD_SUFFIXES or not name:
                continue
            if suffix == "sequence-group":
                groups.append((_names(name), _names(str(value))))
            elif suffix == "aggregate-function":
                functions[name] = _function(key, value)
            elif suffix == "ignore-retract" and _true(options, key):
                ignore_retract.add(name)
            elif suffix == "list-agg-delimiter":
                delimiters[name] = str(value)
            elif suffix == "distinct" and _true(options, key):
                distinct.add(name)
        default = options.get("fields.default-aggregate-function")
        remove_on_group = options.get("partial-update.remove-record-on-sequence-group")
        remove = _true(options, f"{engine}.remove-record-on-delete") if engine in ENGINES[1:3] else False
        merged = cls(
            engine=engine,
            ignore_delete=ignore_delete,
            ignore_update_before=_true(options, "ignore-update-before"),
            remove_record_on_delete=remove,
            default_function=_function("fields.default-aggregate-function", default) if default is not None else None,
            functions=functions,
            ignore_retract=frozenset(ignore_retract),
            delimiters=delimiters,
            distinct=frozenset(distinct),
            sequence_groups=tuple(sorted(groups)),
            remove_on_sequence_group=frozenset(_names(remove_on_group)) if remove_on_group is not None else frozenset(),
        )
        merged._check(options, remove_on_group)
        return merged

    def _check(self, options: Mapping[str, str], remove_on_group: str | None) -> None:
        # Java's own validations (SchemaValidation, the merge function factories), same messages.
        if self.sequence_groups and self.engine != "partial-update":
            raise ValueError(
                f"table option fields.{','.join(self.sequence_groups[0][0])}.sequence-group is for "
                f"merge-engine=partial-update, not {self.engine}"
            )
        grouped: dict[str, str] = {}
        for seq, protected in self.sequence_groups:
            option = f"fields.{','.join(seq)}.sequence-group"
            for name in (*protected, *seq):
                if name in grouped and grouped[name] != option:
                    raise ValueError(f"Field {name} is defined repeatedly by multiple groups: {option}")
                grouped[name] = option
        if self.engine == "partial-update":
            if self.remove_record_on_delete and self.ignore_delete:
                raise ValueError(
                    "ignore-delete and partial-update.remove-record-on-delete have conflicting behavior so should "
                    "not be enabled at the same time."
                )
            if remove_on_group is not None and self.ignore_delete:
                raise ValueError(
                    "ignore-delete and partial-update.remove-record-on-sequence-group have conflicting behavior so "
                    "should not be enabled at the same time."
                )
            if self.remove_record_on_delete and self.sequence_groups:
                raise ValueError(
                    "sequence-group and partial-update.remove-record-on-delete have conflicting behavior so should "
                    "not be enabled at the same time."
                )
            sequence_fields = {n for seq, _ in self.sequence_groups for n in seq}
            if remove_on_group is not None and not self.remove_on_sequence_group <= sequence_fields:
                raise ValueError(
                    f"field '{remove_on_group}' defined in 'partial-update.remove-record-on-sequence-group' option "
                    f"must be part of sequence groups"
                )
        if self.engine == "first-row":
            producer = str(options.get("changelog-producer", "none")).strip().lower()
            if producer not in ("none", "lookup"):
                raise ValueError("Only support 'none' and 'lookup' changelog-producer on FIRST_ROW merge engine")
            if options.get("sequence.field"):
                raise ValueError("Do not support use sequence field on FIRST_ROW merge engine.")
        if self.engine == "partial-update":
            # Java's getAggFuncName: sequence fields take no function; any other function than
            # last_non_null_value needs the field in a sequence group.
            guarded = {n for _, fields in self.sequence_groups for n in fields}
            ordering = {n for fields, _ in self.sequence_groups for n in fields}
            for name, fn in sorted(self.functions.items()):
                if name not in ordering and fn != "last_non_null_value" and name not in guarded:
                    raise ValueError(
                        f"Must use sequence group for aggregation functions but not found for field {name}."
                    )
        if self.engine == "aggregation" and self.remove_record_on_delete and self.ignore_retract:
            name = sorted(self.ignore_retract)[0]
            raise ValueError(
                f"aggregation.remove-record-on-delete and fields.{name}.ignore-retract have conflicting behavior "
                f"so should not be enabled at the same time."
            )

    def check_fields(self, names: Sequence[str], primary_keys: Sequence[str]) -> None:
        """Java's checks of the sequence groups against a table's columns (same messages)."""
        for seq, protected in self.sequence_groups:
            option = f"fields.{','.join(seq)}.sequence-group"
            for name in (*seq, *protected):
                if name not in names:
                    raise ValueError(f"Field {name} can not be found in table schema")
                if name in primary_keys:
                    raise ValueError(
                        f"The sequence-group '{option}' contains primary key field '{name}', which is not allowed. "
                        f"Primary key columns cannot be put in sequence-group."
                    )
        if self.engine == "partial-update":
            guarded = {n for _, fields in self.sequence_groups for n in fields}
            for name in names:
                fn = self.partial_function(name, primary_keys)
                if fn is not None and fn != "last_non_null_value" and name not in guarded:
                    raise ValueError(
                        f"Must use sequence group for aggregation functions but not found for field {name}."
                    )

    def function(self, name: str) -> str:
        """The aggregate function of value field ``name`` (aggregation engine)."""
        return self.functions.get(name) or self.default_function or "last_non_null_value"

    def partial_function(self, name: str, primary_keys: Sequence[str] = ()) -> str | None:
        """The aggregate function of field ``name`` of a partial-update table, None for none:
        sequence fields and primary keys take none (Java's getAggFuncName)."""
        if name in primary_keys or any(name in seq for seq, _ in self.sequence_groups):
            return None
        return self.functions.get(name) or self.default_function

    def retraction_problem(self, value_fields: Sequence[str] = ()) -> str | None:
        """Why a stream with updates and deletes (-U/-D rows) would make this table unreadable, or
        None. ``value_fields`` are the non-key columns where known; aggregate functions named in
        the options are checked either way."""
        if self.ignore_delete:
            return None
        if self.engine == "first-row":
            return (
                "merge-engine=first-row cannot take the updates and deletes a change stream carries "
                "(Paimon's readers fail on them); set ignore-delete=true to keep each key's first row"
            )
        if self.engine == "partial-update" and not self.remove_record_on_delete and not self.sequence_groups:
            return (
                "merge-engine=partial-update cannot take deletes by default (Paimon's readers fail on "
                "them); set ignore-delete=true, or partial-update.remove-record-on-delete=true"
            )
        if self.engine == "partial-update":
            # A retraction retracts the aggregate of every field of a group it carries a sequence for.
            for seq, protected in self.sequence_groups:
                for name in protected:
                    fn = self.partial_function(name)
                    if fn is not None and fn not in RETRACTABLE and name not in self.ignore_retract:
                        return (
                            f"aggregate function '{fn}' of field '{name}' (sequence group of "
                            f"{','.join(seq)}) does not support retraction, and updates retract the old row; "
                            f"set fields.{name}.ignore-retract=true, or ignore-delete=true"
                        )
        if self.engine == "aggregation":  # -D retracts even with ignore-update-before
            names = set(value_fields) | set(self.functions)
            if self.default_function is not None and not value_fields:
                names.add("*")
            for name in sorted(names):
                fn = self.functions.get(name) or self.default_function or "last_non_null_value"
                if fn not in RETRACTABLE and name not in self.ignore_retract:
                    shown = "fields.default-aggregate-function" if name == "*" else f"field '{name}'"
                    return (
                        f"aggregate function '{fn}' of {shown} does not support retraction, and updates "
                        f"retract the old row; set fields.<field>.ignore-retract=true, or ignore-delete=true"
                    )
        return None


def _names(text: str) -> tuple[str, ...]:
    """A comma-separated field list of an option (Java's FIELDS_SEPARATOR)."""
    return tuple(n.strip() for n in text.split(","))


def _function(key: str, value: str) -> str:
    name = str(value).strip().lower()
    if name not in FUNCTIONS:
        raise ValueError(
            f"table option {key}='{value}' is not supported by lakecdc's compaction; supported: {', '.join(FUNCTIONS)}"
        )
    return name
