"""Acme task families (gym/families.py): each module is one template over the generated world."""
