# Which rooms play by themselves is the demo's own record now (demo.AutoplayRoom, which copies the flags
# first: its 0001 runs before this one when the demo app is installed).

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("halls", "0004_venue_language")]

    operations = [migrations.RemoveField(model_name="room", name="autoplay")]
