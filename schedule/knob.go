package schedule

import (
	"fmt"
	"slices"
	"strings"
)

// KnobKind is the kind of decision a knob makes. It decides how the knob is
// read (Config.Int, Str or Bool) and how it becomes features.
type KnobKind uint8

const (
	// ChoiceKind picks one of a few integers, e.g. a vector width {1, 8, 16}
	// or the tile sizes of an axis.
	ChoiceKind KnobKind = iota + 1
	// EnumKind picks a named variant, e.g. an algorithm {threepass, online}.
	EnumKind
	// BoolKind switches something on or off.
	BoolKind
)

func (k KnobKind) String() string {
	switch k {
	case ChoiceKind:
		return "choice"
	case EnumKind:
		return "enum"
	case BoolKind:
		return "bool"
	}
	return "invalid"
}

// A Knob is one tunable decision and its candidate values. The order of
// Values matters: mutation moves to a neighbouring value, so order them so
// that neighbours are similar (ascending sizes).
type Knob struct {
	Name   string
	Kind   KnobKind
	Values []Value
}

// Choice returns a choice among the given integers, in the given order.
func Choice(name string, values ...int) Knob {
	k := Knob{Name: name, Kind: ChoiceKind}
	for _, v := range values {
		k.Values = append(k.Values, IntValue(v))
	}
	return k
}

// Enum returns a choice among named variants, in the given order.
func Enum(name string, values ...string) Knob {
	k := Knob{Name: name, Kind: EnumKind}
	for _, v := range values {
		k.Values = append(k.Values, StringValue(v))
	}
	return k
}

// Bool returns an on/off knob with values false, true.
func Bool(name string) Knob {
	return Knob{Name: name, Kind: BoolKind, Values: []Value{BoolValue(false), BoolValue(true)}}
}

// String describes the knob for listings, e.g. "vec choice {1,8,16}".
func (k Knob) String() string {
	vals := make([]string, len(k.Values))
	for i, v := range k.Values {
		vals[i] = v.String()
	}
	return fmt.Sprintf("%s %s {%s}", k.Name, k.Kind, strings.Join(vals, ","))
}

// valueKind is the kind every value of a knob of kind k has.
func (k KnobKind) valueKind() valueKind {
	switch k {
	case ChoiceKind:
		return vInt
	case EnumKind:
		return vString
	case BoolKind:
		return vBool
	}
	return vInvalid
}

// check reports a knob that no space can hold: these are template bugs.
func (k Knob) check() error {
	if !ValidKnobName(k.Name) {
		return fmt.Errorf("invalid knob name %q", k.Name)
	}
	if len(k.Values) == 0 {
		return fmt.Errorf("knob %s has no values", k.Name)
	}
	want := k.Kind.valueKind()
	if want == vInvalid {
		return fmt.Errorf("knob %s has no kind", k.Name)
	}
	for i, v := range k.Values {
		if v.kind != want {
			return fmt.Errorf("knob %s: value %s is %s, want %s", k.Name, v, v.kind, want)
		}
		if err := checkValue(v); err != nil {
			return fmt.Errorf("knob %s: %w", k.Name, err)
		}
		if slices.Contains(k.Values[:i], v) {
			return fmt.Errorf("knob %s: value %s given twice", k.Name, v)
		}
	}
	return nil
}
