"""Aggregators: Java's ``Field*Agg`` on Python values, and each value column's aggregator as Java's
merge functions choose it (``getAggFuncName``)."""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

from sinks.compaction.merge.options import MergeOptions

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


def _above(acc: Any, value: Any) -> Any:
    return value > acc


def _below(acc: Any, value: Any) -> Any:
    return value < acc


class _Extreme(Aggregator):
    def __init__(self, name: str) -> None:
        self.name = name
        self.better = _above if name == "max" else _below

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
