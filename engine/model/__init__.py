"""The model core: the document of coefficients, its layer stack, its bit-exact history
and its resynthesis."""
