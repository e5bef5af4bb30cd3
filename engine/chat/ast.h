// The parsed template: expression and statement nodes.
#pragma once

#include "value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cairn::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    enum class Type {
        Literal,  // value
        Name,  // name
        List,
        Tuple,  // args = items
        Dict,  // args = key, value, key, value, ...
        Attribute,  // a.name
        Item,  // a[b]
        Slice,  // a[b:c:d] (b, c, d may be null)
        Call,  // a(args, kwargs)
        Filter,  // a | name(args, kwargs)
        Test,  // a is name(args) (negated when `negate`)
        Unary,  // op a: "-", "+", "not"
        Binary,  // a op b: + - * / // % ** ~ and or
        Compare,  // a ops[0] args[0] ops[1] args[1] ...: == != < <= > >= in notin
        Conditional,  // b if a else c (c may be null)
        BlockValue,  // the rendered body of a filter block or a block set
    };
    Type type;
    int line = 0;
    Value value;
    std::string name;
    ExprPtr a, b, c, d;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::string> ops;
    bool negate = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroParam {
    std::string name;
    ExprPtr defaultValue;  // may be null
};

struct Stmt {
    enum class Type {
        Text,
        Output,
        If,
        For,
        Set,
        SetAttribute,
        SetBlock,
        Macro,
        CallBlock,
        FilterBlock,
        Break,
        Continue,
        Scope
    };
    Type type;
    int line = 0;
    std::string text;  // Text; Macro name; SetAttribute attribute
    ExprPtr expr;  // Output; Set value; For iterable; CallBlock call; FilterBlock/SetBlock filter
    ExprPtr target;  // SetAttribute object
    ExprPtr condition;  // For `if` filter
    std::vector<std::string> names;  // For / Set / SetBlock targets
    std::vector<std::pair<ExprPtr, Body>> branches;  // If: conditions (null for else) and bodies
    Body body;  // For, Macro, CallBlock, FilterBlock, SetBlock, Scope
    Body elseBody;  // For
    std::vector<MacroParam> params;  // Macro, CallBlock (caller's parameters); Scope (with-assignments)
};

struct Program {
    Body body;
};

}  // namespace cairn::chat
