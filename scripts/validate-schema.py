#!/usr/bin/env python3
"""Validates YAML files against a JSON Schema (draft-07) with the jsonschema package.

validate-schema.py SCHEMA FILE...            every file must be valid (exit 1 otherwise)
validate-schema.py --invalid SCHEMA FILE...  every file must be refused (exit 1 otherwise)

YAML is read as Rivulet reads it: a date-like scalar (2025-06-17) stays text.
"""
import json
import sys

import jsonschema
import yaml


# libyaml's parser, as Rivulet's (the pure-Python one refuses some flow scalars libyaml takes).
class RivuletLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


# Rivulet's YAML has no timestamps: such a scalar is text.
RivuletLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))


def main(arguments):
    invalid = arguments[:1] == ["--invalid"]
    if invalid:
        arguments = arguments[1:]
    schema_path, files = arguments[0], arguments[1:]
    with open(schema_path, encoding="utf-8") as handle:
        schema = json.load(handle)
    validator = jsonschema.Draft7Validator(schema)
    wrong = 0
    for path in files:
        with open(path, encoding="utf-8") as handle:
            document = yaml.load(handle, Loader=RivuletLoader)
        errors = sorted(validator.iter_errors(document), key=lambda error: list(error.path))
        if invalid and not errors:
            print(f"{path}: accepted, but it is wrong")
            wrong += 1
        elif not invalid and errors:
            best = jsonschema.exceptions.best_match(errors)
            where = "/".join(str(part) for part in best.absolute_path)
            print(f"{path}: {where}: {best.message[:300]}")
            wrong += 1
        elif invalid:
            # What an editor underlines: the error a validator finds most relevant.
            best = jsonschema.exceptions.best_match(errors)
            where = "/".join(str(part) for part in best.absolute_path)
            print(f"{path}: refused: {where}: {best.message[:300]}")
        else:
            print(f"{path}: valid")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
