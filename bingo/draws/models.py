"""A draw's commitment: written before its game's sales open, completed by the sales digest at their close
and by the seed at the reveal. The seed itself is only ever here sealed (bingo.draws.seedbox)."""

from __future__ import annotations

import pgtrigger
from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.models import Venue


class DrawCommitment(models.Model):
    room = models.CharField(_("room"), max_length=24)  # the wing's name: "traditional", "electronic", ...
    game_ref = models.CharField(_("game"), max_length=40)  # the game's id within its room
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    max_ball = models.PositiveSmallIntegerField(_("balls"))
    commitment = models.CharField(_("commitment"), max_length=64)  # SHA-256 of the seed, published first
    sealed_seed = models.BinaryField(_("sealed seed"))  # only the drawing workers' key opens it
    key_id = models.CharField(_("key"), max_length=16)  # which workers' key sealed it
    sales_digest = models.CharField(_("sales digest"), max_length=64, blank=True)  # "" while sales are open
    cards = models.PositiveIntegerField(_("cards sold"), default=0)
    sales_closed_at = models.DateTimeField(_("sales closed at"), null=True, blank=True)
    seed = models.CharField(_("revealed seed"), max_length=64, blank=True)  # "" until the reveal
    revealed_at = models.DateTimeField(_("revealed at"), null=True, blank=True)
    created_at = models.DateTimeField(_("committed at"))

    class Meta:
        verbose_name = _("draw commitment")
        verbose_name_plural = _("draw commitments")
        constraints = [models.UniqueConstraint(fields=["room", "game_ref"], name="one_commitment_per_game")]
        triggers = [
            pgtrigger.Protect(name="append_only", operation=pgtrigger.Delete),
            # What was published never changes: the commitment, the sealed seed, whose game it is; the
            # digest and the seed are written once each.
            pgtrigger.Protect(
                name="commitment_fixed",
                operation=pgtrigger.Update,
                condition=(
                    pgtrigger.Q(old__commitment__df=pgtrigger.F("new__commitment"))
                    | pgtrigger.Q(old__sealed_seed__df=pgtrigger.F("new__sealed_seed"))
                    | pgtrigger.Q(old__room__df=pgtrigger.F("new__room"))
                    | pgtrigger.Q(old__game_ref__df=pgtrigger.F("new__game_ref"))
                    | (
                        ~pgtrigger.Q(old__sales_digest="")
                        & pgtrigger.Q(old__sales_digest__df=pgtrigger.F("new__sales_digest"))
                    )
                    | (~pgtrigger.Q(old__seed="") & pgtrigger.Q(old__seed__df=pgtrigger.F("new__seed")))
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.room}-{self.game_ref}"

    @property
    def game(self) -> str:
        """The game's id in the sales text and the HPKE info: "<room>-<game>"."""
        return f"{self.room}-{self.game_ref}"

    @property
    def revealed(self) -> bool:
        return bool(self.seed)
