package filters

// unmarshalNew decodes data with a new *T's own UnmarshalBinary and returns
// it as I, the interface a battery holds its filters by (Filter,
// staticFilter, bloomFamilyFilter); the value is returned with the error,
// as UnmarshalBinary leaves it, so a battery can check both. It is every
// battery's per-type decode hook: unmarshalNew[staticFilter, Xor8].
func unmarshalNew[I any, T any, PT interface {
	*T
	UnmarshalBinary(data []byte) error
}](data []byte) (I, error) {
	f := PT(new(T))
	err := f.UnmarshalBinary(data)
	return any(f).(I), err
}
