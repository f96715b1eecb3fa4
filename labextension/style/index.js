import './base.css';
import './celldiff.css';
import './timeline.css';
import './chat.css';
