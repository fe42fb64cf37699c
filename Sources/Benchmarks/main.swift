print("callpush-bench: not yet built")
