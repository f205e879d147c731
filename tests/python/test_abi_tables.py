"""The Python package's copies of the C ABI against their sources (no GPU): the element types
against src/element_types.json, the statuses, datatypes and quantized formats against the
enumerators of xgemv.h and xgemv_quant.h, and the ctypes structures against the C structures,
field by field. A header change that the package misses fails here, not at a call."""
import ctypes
import json
import pathlib
import re

import torch

from xgemv import _library as L
from xgemv import qweight

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADERS = ROOT / "include" / "xgemv"


def enumerators():
    text = (HEADERS / "xgemv.h").read_text() + (HEADERS / "xgemv_quant.h").read_text()
    return {name: int(value)
            for name, value in re.findall(r"^\s*(XGEMV_[A-Z0-9_]+)\s*=\s*(\d+)", text, re.M)}


def c_struct_fields(name):
    """(field, C type) of `typedef struct name { ... }` in xgemv_quant.h, in order."""
    text = (HEADERS / "xgemv_quant.h").read_text()
    body = re.search(r"typedef struct %s \{(.*?)\}" % name, text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = []
    for declaration in body.split(";"):
        words = declaration.replace(",", " , ").split()
        if not words:
            continue
        c_type = words[0]
        fields += [(word, c_type) for word in words[1:] if word != ","]
    return fields


CTYPES_OF = {"int64_t": ctypes.c_int64, "size_t": ctypes.c_size_t, "int": ctypes.c_int,
             "xgemv_qformat": ctypes.c_int, "xgemv_datatype": ctypes.c_int}


def test_element_types_follow_the_table():
    table = json.loads((ROOT / "src" / "element_types.json").read_text())
    values = enumerators()
    expected = {getattr(torch, row["torch"]): (values[row["datatype"]], row["prefix"])
                for row in table["element_types"]}
    assert L.ELEMENT_TYPES == expected


def test_statuses_and_datatypes_are_the_headers():
    values = enumerators()
    for name in dir(L):
        if name.startswith("STATUS_") or re.fullmatch(r"R_\d+B?F", name):
            assert getattr(L, name) == values["XGEMV_" + name], name


def test_quantized_formats_are_the_headers():
    values = enumerators()
    header_names = {"int4": "XGEMV_QFORMAT_INT4", "int8": "XGEMV_QFORMAT_INT8",
                    "fp8": "XGEMV_QFORMAT_FP8_E4M3", "fp8-block": "XGEMV_QFORMAT_FP8_E4M3_BLOCK"}
    assert {kind: values[header_names[kind]] for kind in header_names} == qweight._QFORMAT_CODES


def test_structures_match_the_header_field_by_field():
    for structure, c_name in ((L.QWeightInfo, "xgemv_qweight_info"),
                              (L.QWeightLayout, "xgemv_qweight_layout")):
        fields = c_struct_fields(c_name)
        assert [name for name, _ in structure._fields_] == [name for name, _ in fields], c_name
        for (name, ctype), (_, c_type) in zip(structure._fields_, fields):
            assert ctype == CTYPES_OF[c_type], (c_name, name)
