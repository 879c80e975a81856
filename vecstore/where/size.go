package where

// Size is the work a filter asks for, for callers that bound it: Clauses
// counts every node ($and/$or included), Values the operands of $in and
// $nin lists.
type Size struct {
	Clauses int
	Values  int
}

// Size measures w (a nil *Expr is empty).
func (w *Expr) Size() Size {
	if w == nil {
		return Size{}
	}
	s := Size{Clauses: 1, Values: len(w.Values)}
	for _, c := range w.Children {
		cs := c.Size()
		s.Clauses += cs.Clauses
		s.Values += cs.Values
	}
	return s
}

// Size measures d (a nil *DocExpr is empty): every node is a clause.
func (d *DocExpr) Size() Size {
	if d == nil {
		return Size{}
	}
	s := Size{Clauses: 1}
	for _, c := range d.Children {
		s.Clauses += c.Size().Clauses
	}
	return s
}
