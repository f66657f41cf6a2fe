from django.apps import AppConfig


class MachinesConfig(AppConfig):
    name = "machines"
    verbose_name = "Machines"

    def ready(self) -> None:
        # A pool member "machine:<id>" must be a machine of the member's venue (jackpots.services.sources).
        from jackpots.services.sources import by_pk, register_source_resolver
        from machines.models import Machine

        machines = Machine.objects.all()
        register_source_resolver(
            "machine", by_pk(lambda pk: machines.filter(pk=pk).values_list("venue_id", flat=True).first())
        )
