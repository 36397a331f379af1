"""Failure taxonomies as data: MAST built in, custom and AdaMAST/ATLAS taxonomies from files."""

from mastkit.taxonomy.compare import compare_taxonomies, jaccard_overlap, overlap_matrix
from mastkit.taxonomy.load import builtin_taxonomies, load_taxonomy, taxonomy_from_document
from mastkit.taxonomy.model import Category, FailureMode, Taxonomy

__all__ = [
    "Category",
    "FailureMode",
    "Taxonomy",
    "builtin_taxonomies",
    "compare_taxonomies",
    "jaccard_overlap",
    "load_taxonomy",
    "overlap_matrix",
    "taxonomy_from_document",
]
