"""The shop's command line."""

import argparse


def parser():
    p = argparse.ArgumentParser(prog="shop")
    p.add_argument("--dry-run", action="store_true", help="print what would be bought")
    p.add_argument("--max-items", type=int, default=50, help="refuse carts with more items")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    return 0 if args.dry_run else 1
