def lib():
    return 1
