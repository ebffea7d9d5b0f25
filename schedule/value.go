package schedule

import (
	"fmt"
	"regexp"
	"strconv"
)

// valueKind tells which of its fields a Value holds.
type valueKind uint8

const (
	vInvalid valueKind = iota // the zero Value; no knob has it
	vInt
	vString
	vBool
)

func (k valueKind) String() string {
	switch k {
	case vInt:
		return "int"
	case vString:
		return "string"
	case vBool:
		return "bool"
	}
	return "invalid"
}

// Value is the setting of one knob: an integer (choices), a name
// (enums) or a boolean. Values are comparable with ==.
type Value struct {
	kind valueKind
	i    int
	s    string
}

// IntValue returns an integer value.
func IntValue(n int) Value { return Value{kind: vInt, i: n} }

// StringValue returns an enum value. s must be a valid enum name (see
// ValidEnumName); NewSpace and ParseConfig reject anything else, because an
// enum that looked like a number or a boolean would not survive the text form.
func StringValue(s string) Value { return Value{kind: vString, s: s} }

// BoolValue returns a boolean value.
func BoolValue(b bool) Value {
	if b {
		return Value{kind: vBool, i: 1}
	}
	return Value{kind: vBool}
}

// Int returns the integer of an Int value. It panics for other kinds: asking a
// knob for the wrong type is a template bug.
func (v Value) Int() int {
	v.must(vInt)
	return v.i
}

// Str returns the name of a String value; it panics for other kinds.
func (v Value) Str() string {
	v.must(vString)
	return v.s
}

// Bool returns the boolean of a Boolean value; it panics for other kinds.
func (v Value) Bool() bool {
	v.must(vBool)
	return v.i != 0
}

func (v Value) must(k valueKind) {
	if v.kind != k {
		panic(fmt.Sprintf("schedule: value %s is %s, not %s", v, v.kind, k))
	}
}

// String returns the canonical text of v, the form ParseValue reads back.
func (v Value) String() string {
	switch v.kind {
	case vInt:
		return strconv.Itoa(v.i)
	case vString:
		return v.s
	case vBool:
		return strconv.FormatBool(v.i != 0)
	}
	return "<invalid>"
}

var (
	enumName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
	knobName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	// canonicalInt admits exactly the strings strconv.Itoa produces, so that
	// text → config → text is the identity.
	canonicalInt = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)
)

// ValidEnumName reports whether s can be an enum value: a letter followed by
// letters, digits, '_', '.' or '-', and neither "true" nor "false".
func ValidEnumName(s string) bool {
	return enumName.MatchString(s) && s != "true" && s != "false"
}

// ValidKnobName reports whether s can name a knob: a lower-case letter
// followed by lower-case letters, digits or '_'.
func ValidKnobName(s string) bool { return knobName.MatchString(s) }

// ParseValue reads the canonical text of a value. The form decides the kind:
// "true"/"false" are booleans, canonical decimal integers are Ints, valid enum
// names are Strings; anything else is an error.
func ParseValue(s string) (Value, error) {
	switch {
	case s == "true":
		return BoolValue(true), nil
	case s == "false":
		return BoolValue(false), nil
	case canonicalInt.MatchString(s):
		n, err := strconv.Atoi(s)
		if err != nil {
			return Value{}, fmt.Errorf("schedule: integer %q out of range", s)
		}
		return IntValue(n), nil
	case ValidEnumName(s):
		return StringValue(s), nil
	}
	return Value{}, fmt.Errorf("schedule: invalid value %q (want an integer, true, false or a name)", s)
}
