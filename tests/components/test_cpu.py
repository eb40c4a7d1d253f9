"""What a measurement says of its machine (``codeground.components.cpu``)."""

from __future__ import annotations

from codeground.components.cpu import BF16_FLAGS, VECTOR_FLAGS, cpu_list_size, machine


def test_a_kernel_cpu_list_counts_ranges_and_single_cpus():
    assert cpu_list_size("0-1\n") == 2  # a core with SMT, siblings numbered together
    assert cpu_list_size("0,64") == 2  # siblings numbered apart
    assert cpu_list_size("0") == 1
    assert cpu_list_size("0-3,8-11") == 8
    assert cpu_list_size("") is None


def test_machine_names_the_flags_and_topology_that_change_a_figure():
    here = machine()
    assert set(here["flags"]) <= set(VECTOR_FLAGS + BF16_FLAGS)
    assert here["threads_per_core"] is None or 1 <= here["threads_per_core"] <= here["cores"]
    assert here["cores"] >= 1 and isinstance(here["cpu"], str)
