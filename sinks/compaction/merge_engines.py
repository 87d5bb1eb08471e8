"""Paimon's merge engines, as compaction must apply them: the per-key merge a reader does.

A compaction output must read exactly as its inputs did, so this mirrors Java's merge functions
(``DeduplicateMergeFunction``, ``FirstRowMergeFunction``, ``PartialUpdateMergeFunction``,
``AggregateMergeFunction`` and its ``Field*Agg`` aggregators) behind Java's
``ReducerMergeFunctionWrapper``: a key with a single row passes through untouched, row kind and
all; only keys with several rows are merged. Choosing a row (deduplicate, first-row) is done in
Arrow; combining values (partial-update, aggregation) goes row by row in Python over the few keys
that have more than one row (most keys of a bucket have one, in its top level).

Options are Paimon's own names. Anything Paimon offers that is not mirrored here (aggregate
functions inside partial-update's sequence groups, aggregators such as ``merge_map``, ``rbm64`` or
``hll_sketch``) is refused by ``MergeOptions``, so a table is never compacted into something its
readers would show differently.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from sinks.row_kinds import DELETE, INSERT, UPDATE_BEFORE

RETRACT = (UPDATE_BEFORE, DELETE)

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


# --- aggregators: Java's Field*Agg, on Python values -------------------------------------------------

_INT_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}
# Java's BigDecimal arithmetic is exact; Python's default context rounds to 28 digits.
_EXACT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP, traps=[decimal.InvalidOperation, decimal.Inexact])


class _Arith:
    """Exact arithmetic of one numeric type, as Java does it: integer overflow is an error,
    FLOAT is 32-bit, a DECIMAL result beyond its precision becomes NULL."""

    def __init__(self, typ: pa.DataType, column: str) -> None:
        self.typ = typ
        self.column = column
        bits = _INT_BITS.get(typ)
        self.bounds = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if bits else None
        if not (bits or pa.types.is_floating(typ) or pa.types.is_decimal(typ)):
            raise ValueError(f"Data type for sum column must be 'NumericType' but was '{typ}' (column '{column}').")

    def fit(self, value: Any, op: str) -> Any:
        if self.bounds is not None:
            if not self.bounds[0] <= value <= self.bounds[1]:
                raise ArithmeticError(f"column '{self.column}': {self.typ} overflow in {op} ({value})")
            return value
        if pa.types.is_float32(self.typ):
            return float(np.float32(value))
        if pa.types.is_decimal(self.typ):
            # Decimal.fromBigDecimal: rounded half-up to the scale, NULL when it outgrows the precision.
            scaled = value.quantize(Decimal(1).scaleb(-self.typ.scale), rounding=decimal.ROUND_HALF_UP)
            return None if len(scaled.as_tuple().digits) > self.typ.precision else scaled
        return value

    def add(self, a: Any, b: Any) -> Any:
        return self.fit(_EXACT.add(a, b) if isinstance(a, Decimal) else a + b, f"{a} + {b}")

    def sub(self, a: Any, b: Any) -> Any:
        return self.fit(_EXACT.subtract(a, b) if isinstance(a, Decimal) else a - b, f"{a} - {b}")

    def mul(self, a: Any, b: Any) -> Any:
        return self.fit(_EXACT.multiply(a, b) if isinstance(a, Decimal) else a * b, f"{a} * {b}")

    def div(self, a: Any, b: Any) -> Any:
        if self.bounds is not None:
            q = abs(a) // abs(b)  # Java's integer division truncates toward zero
            return self.fit(q if (a >= 0) == (b >= 0) else -q, f"{a} / {b}")
        if isinstance(a, Decimal):
            try:  # BigDecimal.divide without a scale fails on a non-terminating quotient; so does this
                return self.fit(_EXACT.divide(a, b), f"{a} / {b}")
            except decimal.Inexact:
                raise ArithmeticError(f"column '{self.column}': {a} / {b} has no exact decimal quotient") from None
        return self.fit(a / b, f"{a} / {b}")

    def negate(self, value: Any) -> Any:
        return self.fit(-value, f"-{value}")


class Aggregator:
    """One field's aggregate: ``agg`` folds a row's value in, ``retract`` takes one out."""

    name = ""
    column = ""  # set by ``aggregator``, for errors

    def reset(self) -> None:
        pass

    def agg(self, acc: Any, value: Any) -> Any:
        raise NotImplementedError

    def retract(self, acc: Any, value: Any) -> Any:
        raise ValueError(
            f"Aggregate function '{self.name}' of column '{self.column}' does not support retraction; to let it "
            f"ignore retraction messages, set 'fields.{self.column}.ignore-retract'='true'."
        )


class _Sum(Aggregator):
    name = "sum"

    def __init__(self, arith: _Arith) -> None:
        self.arith = arith

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return self.arith.add(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return (None if value is None else self.arith.negate(value)) if acc is None else acc
        return self.arith.sub(acc, value)


class _Product(_Sum):
    name = "product"

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return self.arith.mul(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return acc
        return self.arith.div(acc, value)


class _Extreme(Aggregator):
    def __init__(self, name: str) -> None:
        self.name = name
        self.better = (lambda a, b: b > a) if name == "max" else (lambda a, b: b < a)

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return value if self.better(acc, value) else acc


class _LastValue(Aggregator):
    name = "last_value"

    def agg(self, acc: Any, value: Any) -> Any:
        return value

    def retract(self, acc: Any, value: Any) -> Any:
        return None


class _LastNonNull(Aggregator):
    name = "last_non_null_value"

    def agg(self, acc: Any, value: Any) -> Any:
        return acc if value is None else value

    def retract(self, acc: Any, value: Any) -> Any:
        return None if value is not None else acc


class _First(Aggregator):
    def __init__(self, skip_nulls: bool) -> None:
        self.name = "first_non_null_value" if skip_nulls else "first_value"
        self.skip_nulls = skip_nulls
        self.initialized = False

    def reset(self) -> None:
        self.initialized = False

    def agg(self, acc: Any, value: Any) -> Any:
        if not self.initialized and not (self.skip_nulls and value is None):
            self.initialized = True
            return value
        return acc


class _Listagg(Aggregator):
    name = "listagg"

    def __init__(self, delimiter: str, distinct: bool) -> None:
        self.delimiter = delimiter
        self.distinct = distinct

    def agg(self, acc: Any, value: Any) -> Any:
        if value is None or not value.strip():
            return acc
        if acc is None or not acc.strip():
            return value
        if not self.distinct:
            return acc + self.delimiter + value
        seen = set(acc.split(self.delimiter))
        out = [acc]
        for token in value.split(self.delimiter):
            if token.strip() and token not in seen:
                seen.add(token)
                out.append(token)
        return self.delimiter.join(out)


class _Bool(Aggregator):
    def __init__(self, name: str) -> None:
        self.name = name

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return (acc and value) if self.name == "bool_and" else (acc or value)


class _Rbm32(Aggregator):
    """Java's ``FieldRoaringBitmap32Agg`` on VARBINARY columns: the union of two serialized 32-bit
    RoaringBitmaps (portable format, run-optimized as Java's ``RoaringBitmap32.serialize``)."""

    name = "rbm32"

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        try:
            merged = BitMap.deserialize(acc) | BitMap.deserialize(value)
        except (ValueError, TypeError, OverflowError):
            raise ValueError(
                f"column '{self.column}' (rbm32): a value is not a serialized 32-bit RoaringBitmap "
                f"(portable format, as RoaringBitmap.serialize writes it)"
            ) from None
        merged.run_optimize()
        return merged.serialize()


class _Collect(Aggregator):
    """Java's ``FieldCollectAgg`` on ARRAY columns: the arrays concatenated, each element once with
    ``fields.<f>.distinct`` (first occurrences, in order, as pypaimon-rust keeps them); a
    retraction removes one occurrence of each of its elements."""

    name = "collect"

    def __init__(self, distinct: bool) -> None:
        self.distinct = distinct

    def agg(self, acc: Any, value: Any) -> Any:
        if acc is None and value is None:
            return None
        if (acc is None or value is None) and not self.distinct:
            return value if acc is None else acc
        if not self.distinct:
            return [*acc, *value]
        out: list[Any] = []
        for element in (*(acc or ()), *(value or ())):
            if element not in out:
                out.append(element)
        return out

    def retract(self, acc: Any, value: Any) -> Any:
        if acc is None:
            return None
        if not value:
            return acc
        pending = list(value)
        out = []
        for element in acc:
            if element in pending:
                pending.remove(element)
            else:
                out.append(element)
        return out


class _KeyValue(Aggregator):
    """Primary-key columns (partition keys among them) keep the newest row's value."""

    name = "primary-key"

    def agg(self, acc: Any, value: Any) -> Any:
        return value

    def retract(self, acc: Any, value: Any) -> Any:
        return value


class _IgnoreRetract(Aggregator):
    def __init__(self, inner: Aggregator) -> None:
        self.inner = inner
        self.name = inner.name

    def reset(self) -> None:
        self.inner.reset()

    def agg(self, acc: Any, value: Any) -> Any:
        return self.inner.agg(acc, value)

    def retract(self, acc: Any, value: Any) -> Any:
        return acc


def aggregator(function: str, typ: pa.DataType, column: str, opts: MergeOptions) -> Aggregator:
    agg: Aggregator
    if function in ("sum", "product"):
        arith = _Arith(typ, column)
        agg = _Sum(arith) if function == "sum" else _Product(arith)
    elif function in ("max", "min"):
        if pa.types.is_nested(typ) or pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
            raise ValueError(f"Data type for {function} column '{column}' must be comparable but was '{typ}'.")
        agg = _Extreme(function)
    elif function == "last_value":
        agg = _LastValue()
    elif function == "last_non_null_value":
        agg = _LastNonNull()
    elif function in ("first_value", "first_non_null_value"):
        agg = _First(skip_nulls=function == "first_non_null_value")
    elif function == "listagg":
        if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
            raise ValueError(f"Data type for list agg column '{column}' must be 'VarCharType' but was '{typ}'.")
        agg = _Listagg(opts.delimiters.get(column, ","), column in opts.distinct)
    elif function == "collect":
        if not (pa.types.is_list(typ) or pa.types.is_large_list(typ)):
            raise ValueError(f"Data type for collect column '{column}' must be 'Array' but was '{typ}'.")
        agg = _Collect(column in opts.distinct)
    elif function == "rbm32":
        if not (pa.types.is_binary(typ) or pa.types.is_large_binary(typ)):
            raise ValueError(f"Data type for roaring bitmap column '{column}' must be 'VarBinaryType' but was '{typ}'.")
        agg = _Rbm32()
    elif function in ("bool_and", "bool_or"):
        if not pa.types.is_boolean(typ):
            raise ValueError(f"Data type for {function} column '{column}' must be 'BooleanType' but was '{typ}'.")
        agg = _Bool(function)
    else:  # MergeOptions refuses anything else
        raise ValueError(f"aggregate function '{function}' is not supported")
    agg.column = column
    return _IgnoreRetract(agg) if column in opts.ignore_retract else agg


# --- merge functions over one key's rows (oldest first) ------------------------------------------

Row = tuple[int, int, list[Any]]  # (sequence number, row kind, value columns)
MergeFn = Callable[[Sequence[Row]], Row]


def _init_row(values: Sequence[Any], nullable: Sequence[bool]) -> list[Any]:
    """A row restarted by a retraction: the NOT NULL fields from it, nullable fields NULL.

    This is Java's ``initRow`` up to Paimon 1.3 and pypaimon-rust 0.4's. Java's main branch (since
    apache/paimon#7645, 2026-04) copies the nullable fields too, so an aggregate re-inserted after a
    delete there continues from the deleted row's values; the readers lakecdc tables are read with
    restart from NULL, and so does compaction here (compacting must not change what they read)."""
    return [v if not n else None for v, n in zip(values, nullable, strict=True)]


def partial_update(
    opts: MergeOptions,
    nullable: Sequence[bool],
    names: Sequence[str],
    aggs: Sequence[Aggregator | None] = (),
) -> MergeFn:
    """Java's ``PartialUpdateMergeFunction``: the newest non-null value of each field, or, for the
    fields of a sequence group, the values of the row whose group sequence is highest — folded by
    the field's aggregate function where it has one (``partial_aggregators``)."""
    groups = _sequence_group_indices(opts, names)
    removing = {names.index(n) for n in opts.remove_on_sequence_group if n in names}
    # Java applies aggregate functions only when there are sequence groups.
    field_aggs: list[Aggregator | None] = list(aggs) if aggs and groups else [None] * len(names)

    def merge(rows: Sequence[Row]) -> Row:
        for a in field_aggs:
            if a is not None:
                a.reset()
        row: list[Any] = [None] * len(nullable)
        seq, meet_insert, delete_row, filled = 0, False, False, False
        for s, kind, values in rows:
            delete_row = False
            if kind in RETRACT:
                if not filled:
                    row = _init_row(values, nullable)
                    filled = True
                if opts.ignore_delete:
                    continue
                seq = s
                if groups:
                    if _retract_groups(row, values, kind, groups, removing, field_aggs):
                        # The row restarts as the -D row, all fields (pypaimon-rust 0.4 as Java's
                        # main branch; unlike remove-record-on-delete's restart in pypaimon-rust).
                        delete_row = True
                        row = list(values)
                    continue
                if opts.remove_record_on_delete:
                    if kind == DELETE:
                        delete_row = True
                        row = _init_row(values, nullable)
                    continue
                raise ValueError(
                    "By default, Partial update can not accept delete records, set ignore-delete=true, "
                    "partial-update.remove-record-on-delete=true, or sequence groups"
                )
            seq = s
            if groups:
                _update_groups(row, values, groups, field_aggs)
            else:
                for i, v in enumerate(values):
                    if v is not None:
                        row[i] = v
                    elif not nullable[i]:
                        raise ValueError(f"Field {names[i]} can not be null")
            meet_insert = filled = True
        return seq, DELETE if delete_row or not meet_insert else INSERT, row

    return merge


def _sequence_group_indices(opts: MergeOptions, names: Sequence[str]) -> dict[int, tuple[int, ...]]:
    """Value column index -> the indices of its group's sequence fields, for every field of every
    group (its protected fields and its sequence fields)."""
    opts.check_fields(names, ())
    index = {n: i for i, n in enumerate(names)}
    out: dict[int, tuple[int, ...]] = {}
    for seq, protected in opts.sequence_groups:
        seq_index = tuple(index[n] for n in seq)
        for name in (*protected, *seq):
            out[index[name]] = seq_index
    return out


def _compare(values: Sequence[Any], row: Sequence[Any], seq: tuple[int, ...]) -> int:
    """Java's ``UserDefinedSeqComparator`` (ascending, NULL lowest) of a row's group sequence
    against the merged row's."""
    for i in seq:
        a, b = values[i], row[i]
        if a is None or b is None:
            if a is None and b is None:
                continue
            return -1 if a is None else 1
        if a != b:
            return -1 if a < b else 1
    return 0


def _group_wins(values: Sequence[Any], row: Sequence[Any], seq: tuple[int, ...], done: list[bool]) -> bool | None:
    """Whether the row's values go into the group: it carries the group's sequence, not older than
    the merged row's (True), or older (False). None for a row without any of the sequence fields:
    it leaves the group alone (Java's ``isEmptySequenceGroup``, which marks the sequence fields
    processed)."""
    if all(values[j] is None for j in seq):
        for j in seq:
            done[j] = True
        return None
    return _compare(values, row, seq) >= 0


def _update_groups(
    row: list[Any], values: Sequence[Any], groups: Mapping[int, tuple[int, ...]], aggs: Sequence[Aggregator | None]
) -> None:
    """``updateWithSequenceGroup``: fields outside groups take non-null values (or fold them in
    with their function); a group takes the row's values (NULLs included; a field with a function
    folds the value in) when its sequence is not older, its functions fold an older row's value in
    reversed (``aggReversed``), and a row whose sequence fields are all NULL leaves it alone."""
    done = [False] * len(row)
    for i, v in enumerate(values):
        seq = groups.get(i)
        agg = aggs[i]
        if seq is None:
            if agg is not None:
                row[i] = agg.agg(row[i], v)
            elif v is not None:
                row[i] = v
            continue
        if done[i]:
            continue
        wins = _group_wins(values, row, seq, done)
        if wins:
            if i in seq:  # a sequence field: all of the group's sequence fields at once
                for j in seq:
                    row[j] = values[j]
                    done[j] = True
                continue
            row[i] = v if agg is None else agg.agg(row[i], v)
        elif wins is not None and agg is not None:
            row[i] = agg.agg(v, row[i])


def _retract_groups(
    row: list[Any],
    values: Sequence[Any],
    kind: int,
    groups: Mapping[int, tuple[int, ...]],
    removing: set[int],
    aggs: Sequence[Aggregator | None],
) -> bool:
    """``retractWithSequenceGroup``: a group whose sequence is not older takes the retraction's
    sequence values and NULLs its other fields; a field with a function retracts the value
    instead, whatever the group's order. True when a -D of a group named in
    ``partial-update.remove-record-on-sequence-group`` removes the whole row."""
    done = [False] * len(row)
    updated: set[int] = set()
    for i in range(len(row)):
        seq = groups.get(i)
        if seq is None or done[i]:
            continue
        wins = _group_wins(values, row, seq, done)
        agg = aggs[i]
        if wins and i in seq:
            for j in seq:
                if j not in updated:
                    if kind == DELETE and j in removing:
                        return True
                    row[j] = values[j]
                    updated.add(j)
                done[j] = True
        elif wins is not None and agg is not None:
            row[i] = agg.retract(row[i], values[i])
        elif wins:
            row[i] = None
    return False


def aggregation(opts: MergeOptions, aggregators: Sequence[Aggregator], nullable: Sequence[bool] = ()) -> MergeFn:
    """Java's ``AggregateMergeFunction``."""
    nullable = list(nullable) or [True] * len(aggregators)

    def merge(rows: Sequence[Row]) -> Row:
        for a in aggregators:
            a.reset()
        row: list[Any] = [None] * len(aggregators)
        delete_row = False
        for _, kind, values in rows:
            delete_row = opts.remove_record_on_delete and kind == DELETE
            if delete_row:
                row = _init_row(values, nullable)
                continue
            if kind in RETRACT:
                row = [a.retract(acc, v) for a, acc, v in zip(aggregators, row, values, strict=True)]
            else:
                row = [a.agg(acc, v) for a, acc, v in zip(aggregators, row, values, strict=True)]
        return rows[-1][0], DELETE if delete_row else INSERT, row

    return merge


# --- a bucket's rows, merged ------------------------------------------------------------------------


def _group_ends(data: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """For rows sorted by key: True at the last row of each key."""
    n = data.num_rows
    if n <= 1:
        return np.ones(n, dtype=bool)
    change = np.zeros(n - 1, dtype=bool)
    for k in keys:
        col = data.column(k).combine_chunks()
        change |= pc.not_equal(col.slice(0, n - 1), col.slice(1)).to_numpy(zero_copy_only=False)
    return np.append(change, True)


def merge_sorted(
    data: pa.Table,
    keys: Sequence[str],
    opts: MergeOptions,
    sequence_column: str,
    kind_column: str,
    primary_keys: Sequence[str] = (),
    sequence_fields: Sequence[str] = (),
    nullable: Mapping[str, bool] | None = None,
) -> pa.Table:
    """One row per key of ``data`` (sorted by key, then oldest first), as the table's merge
    engine makes it. Rows keep their columns' order; retractions are not dropped here.
    ``keys`` are the columns rows are grouped by (the bucket's trimmed primary key);
    ``primary_keys`` all primary-key columns, partition keys included."""
    n = data.num_rows
    if n == 0:
        return data
    ends = _group_ends(data, keys)
    if opts.engine == "deduplicate":
        return data.filter(pa.array(ends))
    if opts.engine == "first-row":
        # The first row per key that is not a retraction (ignore-delete; without it Java fails).
        kinds = data.column(kind_column).to_numpy()
        retract = np.isin(kinds, RETRACT)
        if retract.any() and not opts.ignore_delete:
            raise ValueError(
                "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE records. "
                "You can config 'ignore-delete' to ignore the DELETE/UPDATE_BEFORE records."
            )
        starts = np.concatenate(([True], ends[:-1]))
        group = np.cumsum(starts) - 1
        singles = starts & ends
        keep = np.zeros(n, dtype=bool)
        candidates = np.flatnonzero(~retract & ~singles)
        if candidates.size:
            _, first = np.unique(group[candidates], return_index=True)
            keep[candidates[first]] = True
        return data.filter(pa.array(keep | singles))
    starts = np.concatenate(([True], ends[:-1]))
    singles = starts & ends
    if singles.all():
        return data
    multi = np.flatnonzero(~singles)
    rows = data.take(pa.array(multi))
    value_names = [c for c in data.column_names if c not in keys and c not in (sequence_column, kind_column)]
    nulls = [(nullable or {}).get(n, n not in primary_keys) for n in value_names]
    if opts.engine == "partial-update":
        merge = partial_update(
            opts, nulls, value_names, partial_aggregators(opts, rows.schema, value_names, primary_keys)
        )
    else:
        merge = aggregation(opts, aggregators(opts, rows.schema, value_names, primary_keys, sequence_fields), nulls)
    seqs = rows.column(sequence_column).to_pylist()
    kinds = rows.column(kind_column).to_pylist()
    columns = [rows.column(c).to_pylist() for c in value_names]
    group_ends = ends[multi]
    out_index: list[int] = []
    out_seq: list[int] = []
    out_kind: list[int] = []
    out_values: list[list[Any]] = [[] for _ in value_names]
    start = 0
    for i in range(len(multi)):
        if not group_ends[i]:
            continue
        group_rows = [(seqs[j], kinds[j], [col[j] for col in columns]) for j in range(start, i + 1)]
        seq, kind, values = merge(group_rows)
        out_index.append(i)
        out_seq.append(seq)
        out_kind.append(kind)
        for col, v in zip(out_values, values, strict=True):
            col.append(v)
        start = i + 1
    merged_keys = rows.select(list(keys)).take(pa.array(out_index))
    arrays = []
    for name in data.column_names:
        typ = data.schema.field(name).type
        if name == sequence_column:
            arrays.append(pa.array(out_seq, typ))
        elif name == kind_column:
            arrays.append(pa.array(out_kind, typ))
        elif name in keys:
            arrays.append(merged_keys.column(name))
        else:
            arrays.append(pa.array(out_values[value_names.index(name)], typ))
    merged = pa.Table.from_arrays(arrays, schema=data.schema)
    out = pa.concat_tables([data.filter(pa.array(singles)), merged])
    return out.take(pc.sort_indices(out, sort_keys=[(k, "ascending") for k in keys]))


def aggregators(
    opts: MergeOptions,
    schema: pa.Schema,
    names: Sequence[str],
    primary_keys: Sequence[str] = (),
    sequence_fields: Sequence[str] = (),
) -> list[Aggregator]:
    """Each value column's aggregator, chosen as Java's ``AggregateMergeFunction.getAggFuncName``:
    sequence fields take the last value, primary-key columns keep theirs, others their function."""
    out: list[Aggregator] = []
    for n in names:
        if n in sequence_fields:
            out.append(_LastValue())
        elif n in primary_keys:
            out.append(_KeyValue())
        else:
            out.append(aggregator(opts.function(n), schema.field(n).type, n, opts))
    return out


def partial_aggregators(
    opts: MergeOptions, schema: pa.Schema, names: Sequence[str], primary_keys: Sequence[str] = ()
) -> list[Aggregator | None]:
    """Each value column's aggregate function on a partial-update table (None: plain update), as
    Java's ``PartialUpdateMergeFunction.getAggFuncName``."""
    out: list[Aggregator | None] = []
    for n in names:
        if n in primary_keys:
            out.append(_KeyValue())
            continue
        fn = opts.partial_function(n)
        out.append(None if fn is None else aggregator(fn, schema.field(n).type, n, opts))
    return out
