"""The learned evaluation: a (768 -> N)x2 -> 1 net in bullet's quantised layout."""
