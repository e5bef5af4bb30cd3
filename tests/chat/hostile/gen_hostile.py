#!/usr/bin/env python3
"""Writes the generated members of the hostile-template corpus (the long chains and
deep nestings, too long to write by hand) next to this script:

    python3 tests/chat/hostile/gen_hostile.py

The other *.jinja files here are written by hand. Each file is one class of hostile
template; test_chat_hostile renders every *.jinja in this folder and requires a clean
result (success or cairn::TemplateError) within a time and memory bound."""
import os

N = 5000  # links per chain: far past the parser's nesting limit (200)
B = 2000   # nested blocks
HERE = os.path.dirname(os.path.abspath(__file__))

GENERATED = {
    "chain_plus": "{{ 1" + " + 1" * N + " }}",
    "chain_concat": "{{ 'a'" + " ~ 'a'" * N + " }}",
    "chain_and": "{{ 1" + " and 1" * N + " }}",
    "chain_or": "{{ 0" + " or 0" * N + " }}",
    "chain_multiply": "{{ 1" + " * 1" * N + " }}",
    "chain_power": "{{ 1" + " ** 1" * N + " }}",
    "chain_compare": "{{ 1" + " < 2" * N + " }}",
    "chain_filter": "{{ 'a'" + "|e" * N + " }}",
    "chain_mixed_postfix": "{{ x" + ".a[0]()" * N + " }}",
    "chain_attribute": "{{ x" + ".a" * N + " }}",
    "chain_subscript": "{{ x" + "[0]" * N + " }}",
    "chain_call": "{{ x" + "()" * N + " }}",
    "chain_else": "{{ 1" + " if 0 else 1" * N + " }}",
    "chain_not": "{{ " + "not " * N + "1 }}",
    "chain_unary_minus": "{{ " + "-" * N + "1 }}",
    "chain_elif": "{% if 0 %}" + "{% elif 0 %}" * N + "{% else %}ok{% endif %}",
    "nested_parentheses": "{{ " + "(" * N + "1" + ")" * N + " }}",
    "nested_lists": "{{ " + "[" * N + "1" + "]" * N + " }}",
    "nested_dicts": "{{ " + "{'a': " * N + "1" + "}" * N + " }}",
    "nested_if_blocks": "{% if 1 %}" * B + "x" + "{% endif %}" * B,
    "nested_for_blocks": "{% for i in [1] %}" * B + "x" + "{% endfor %}" * B,
    "nested_macro_definitions": "{% macro m() %}" * B + "x" + "{% endmacro %}" * B,
    "nested_filter_blocks": "{% filter upper %}" * B + "x" + "{% endfilter %}" * B,
}

for name, text in GENERATED.items():
    with open(os.path.join(HERE, name + ".jinja"), "w") as f:
        f.write(text)
