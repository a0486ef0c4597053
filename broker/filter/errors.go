package filter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// SyntaxError is why an expression does not compile: a character or token
// the grammar does not allow there, or a construct RocketMQ's
// ComparisonExpression refuses when it builds the expression (NULL in a
// comparison, a string or boolean operand of '<', reversed constant
// BETWEEN bounds, a number out of range). Line and Column are 1-based
// (Column counts characters, as the JavaCC message of a Java broker does),
// Offset is the byte offset in the expression.
type SyntaxError struct {
	Line, Column, Offset int
	Msg                  string
}

// Error renders "SQL92 expression: line L, column C: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("SQL92 expression: line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// newSyntaxError locates byte offset pos of src and returns the error.
func newSyntaxError(src string, pos int, msg string) *SyntaxError {
	pos = min(max(pos, 0), len(src))
	before := src[:pos]
	line := 1 + strings.Count(before, "\n")
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return &SyntaxError{Line: line, Column: 1 + utf8.RuneCountInString(before), Offset: pos, Msg: msg}
}
