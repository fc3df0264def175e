def good(a):
    return a


def bad(:
    pass


class Survivor:
    def method(self):
        return 1
