// PLACEHOLDER: indexing (getitem / setitem) is being implemented.
