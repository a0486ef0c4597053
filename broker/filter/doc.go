// Package filter compiles and evaluates RocketMQ's SQL92 message selectors
// (subscriptions of expression type SQL92, MessageSelector.bySql in the
// Java client) against a message's properties.
//
// It owns the selector language as the Apache RocketMQ broker defines it
// (filter/.../parser/SelectorParser.jj, filter/.../expression/*.java,
// FilterFactory's SqlFilter): a hand-written lexer and recursive-descent
// parser producing an immutable *Expr, and the evaluation of an *Expr
// against codec's properties string ("name\x01value\x02...") in one pass,
// without building a map and without allocating. Grammar: OR, AND, NOT;
// =, <>, >, >=, <, <=; [NOT] BETWEEN; [NOT] IN over string literals; IS
// [NOT] NULL; [NOT] CONTAINS, STARTSWITH, ENDSWITH (RocketMQ 5.x); unary
// + and -; string literals in single quotes (a doubled quote stands for
// one quote), integer
// literals (an l/L suffix allowed; Integer or Long by size), decimal
// literals (Double; RocketMQ has no hexadecimal or octal literals and
// refuses 0.0), TRUE, FALSE, NULL; "--" line and "/* */" comments.
// Semantics follow the Java classes, quirks included, and are checked
// case by case against RocketMQ's own implementation
// (testdata/filter/sql92_cases.txt, run by cases_test.go here and by the
// Java interop test S11SqlGrammarTest):
//   - Properties are strings. A comparison with a number literal parses
//     the property as that literal's type (Integer.valueOf for 5,
//     Long.valueOf for 5000000000, Double.valueOf for 5.0), so "a > 5"
//     with a = "5.5" is an evaluation error; '<' and its kin between two
//     properties parse both as Double; '=' between two properties compares
//     the strings.
//   - Three-valued logic: an absent property is NULL, a comparison with
//     NULL is NULL, NOT NULL is NULL, and AND/OR follow SQL's tables. Only
//     TRUE matches; NULL and an evaluation error do not (the message is
//     skipped), as ExpressionMessageFilter.isMatchedByCommitLog.
//   - An evaluation error ends the evaluation where Java's exception
//     would: "b = 'x' OR a > 1" matches b = "x" whatever a holds, but
//     "a > 1 OR b = 'x'" does not when a is not an integer.
//   - NOT binds tighter than comparisons ("NOT a = 1" is "(NOT a) = 1"),
//     a bare property is FALSE (a property is never a Boolean), and text
//     after a complete selector is ignored once its first token has been
//     read ("a = 1 garbage" is "a = 1"), all as in RocketMQ.
//   - TAGS, KEYS and the other system properties are ordinary properties:
//     "TAGS IN ('a', 'b')" filters by tag.
//
// Differences from RocketMQ: expressions are limited to MaxLen bytes and
// 500 levels of nesting; error messages are popshim's own
// (*SyntaxError: line, column, token); strings are compared as UTF-8
// bytes, which equals Java's comparison for valid UTF-8.
//
// It must not know about requests, subscriptions, response codes or the
// store: callers (package broker, broker/longpoll) decide when SQL92 is
// allowed and what a compile error answers. It imports only codec (the
// properties layout).
package filter
