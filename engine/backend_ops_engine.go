package engine

// onStore runs fn with e's Store, guarded against Close.
func onStore[R any](e *Engine, fn func(Store) (R, error)) (R, error) {
	done, err := e.enterStore()
	if err != nil {
		var zero R
		return zero, err
	}
	defer done()
	return fn(e.store)
}
